"""The stored results: the immutable model, run directories, the catalog and verdicts."""
