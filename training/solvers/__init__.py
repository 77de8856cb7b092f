"""Exact solvers for games small enough to solve: two-player Pico (``training.solvers.pico``)."""
