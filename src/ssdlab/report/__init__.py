"""Renderers: they read stored runs only (run.json + artefacts), so any run can be re-rendered."""
