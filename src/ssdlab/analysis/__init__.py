"""Pure statistics over measurements: SNIA steady state, latency anomalies, significance tests."""
