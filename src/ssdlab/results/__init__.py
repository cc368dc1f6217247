"""The stored results: the immutable model (runs, points, measurements, the run request, typed tags, events and
extra facts), run directories and their atomic writes, the catalog, and verdicts with their exit codes."""
