"""Evaluation: benchmarks on multi-hop QA data, baselines and reference computations."""
