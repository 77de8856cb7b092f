"""`make demo`: train a MaskablePPO baseline on two-player Pico against random
and heuristic opponents, then measure it over 1,000 seat-rotated games against random and the
heuristic, with 95% confidence intervals. A few minutes on 2 cores."""

from __future__ import annotations

from training.train import main

DEMO_ARGS = [
    "--env",
    "hiddenhand/Pico-v0",
    "--reward-mode",
    "win",
    "--opponents",
    "random:1,heuristic:1",
    "--total-timesteps",
    "150000",
    "--eval-every",
    "50000",
    "--snapshot-every",
    "0",
    "--final-eval-games",
    "1000",
    "--run-name",
    "demo-pico",
    "--overwrite",  # the demo's own folder: a second `make demo` replaces it
]

if __name__ == "__main__":
    main(DEMO_ARGS)
