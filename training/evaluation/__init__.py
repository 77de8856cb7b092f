"""Evaluation beyond one match: the opponent panel and the benchmark's aggregate statistics."""
