"""`ssdlab serve`: the results catalog and runs in progress in a browser (app.py), with /metrics for Prometheus.

Imported only by `ssdlab serve`; it reads what runs store and never writes a run (tag edits, when allowed, go
to DIR/tags.json as `ssdlab tag` does).
"""
