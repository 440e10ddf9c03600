"""Benchmarks against the anchors: `make bench` / `python -m benchmarks.run` (see run.py)."""
