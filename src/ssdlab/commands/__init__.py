"""Subcommands contributed by features (sim, ss-check, hist-log, plot); see cli.EXTENSIONS."""
