"""Several devices and hosts at once: per-device parts, exact aggregates, host groups, the host ceiling."""
