"""Benchmark of the metering model gateway: added latency per call and throughput."""
