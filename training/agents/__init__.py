"""Agents for every game: the shared protocol, random, per-game heuristics."""
