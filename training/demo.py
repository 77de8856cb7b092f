"""`make demo`: train a MaskablePPO baseline on two-player Pico against random
and heuristic opponents, then measure it over 1,000 seat-rotated games against random and the
heuristic, with 95% confidence intervals. About a minute on 2 cores (docs/results.md).

The run is seeded and trains on one torch thread (``training.train`` sets it), so run
again on the same machine with the same packages it prints the same figures. Another
machine can print slightly different ones (a long chain of floating-point steps, on other
CPU kernels or other versions of the packages ``constraints.txt`` does not pin): see
docs/results.md for how much.
"""

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
