"""Benchmark RL algorithms on Hidden Hand: the harness of the protocol in docs/benchmark.md.

    python -m training.benchmark --algorithms ppo-random,ppo-fsp --configs pico-2p \\
        --seeds 0-4 --steps 50000 --out runs/bench --jobs 2
    python -m training.benchmark --algorithms sp-ppo,sp-mmd,sp-qmmd,sp-neurd,sp-fsp,sp-psro \\
        --configs pico-2p --seeds 0-4 --steps medium --nash-conv-deals 200 --out runs/bench-v2
    python -m training.benchmark --report runs/bench
    python -m training.benchmark --report runs/bench --merge other/results.csv

Protocol v1 (budgets ``small`` and ``large``) was run with the SB3 algorithms
(``ppo-random``, ``ppo-heuristic``, ``ppo-selfplay``, ``ppo-fsp``, ``psro``); protocol v2
(budgets ``medium`` on every configuration and ``large-v2`` on two-player Pico, the
NashConv over 200 deals) adds the algorithms on the self-play learner
(``training.selfplay``): ``sp-ppo``, ``sp-mmd``, ``sp-qmmd``, ``sp-neurd``, ``sp-fsp`` and
``sp-psro``, their hyperparameters in ``algorithms.HYPERPARAMETERS`` (one dict each, the
same for every configuration) and what they share in ``algorithms.LEARNER``. A budget
counts the decisions of every seat that learns: an SB3 algorithm's one learning seat, or
the learner's ``--decisions`` (every seat in self-play, one seat a game with a pool or
PSRO's mixture).

Every (algorithm, configuration, seed) is a run folder ``OUT/runs/ALG/CONFIG/seedS``:
the algorithm trains there for the step budget and saves a model that
``training.evaluate`` loads (``model.zip`` from SB3, ``model.npz`` from the learner), then
the harness scores it against the opponent panel
(``training.evaluation.panel``) with the protocol's evaluation seeds and writes
``score.json`` (with the wall and CPU seconds of training and the CPU seconds of
scoring). Finished runs are skipped, so an interrupted benchmark resumes where it
stopped, and a learner run that was cut short goes on from its last evaluation
(``training.selfplay --resume``), its cost counting both parts (``sp-psro`` trains its
finished rounds again, the same ones, and goes on in the round that was cut short).
The report aggregates the panel scores over runs (interquartile mean with
stratified bootstrap intervals, probability of improvement, performance profiles) into
``results.json``, ``results.csv``, ``results.md`` and plots, with the runs' learning
curves in ``results-curves.csv`` (with ``--curve-games G``, also each run's panel score,
G games a member, at each model it kept: a learner run's evaluations, PSRO's rounds);
``--merge`` adds the runs of another report's ``results.csv``, and their curves from
beside it (a benchmark split across machines).

An algorithm is a registered function ``(env_id, options, steps, seed, folder) -> Path``
that trains for ``steps`` decisions of its learning seats and returns the saved model's
path; register yours with ``@register("name")`` (``training.benchmark.algorithms``) in a
module given to ``--import``.

The package: this module holds the protocol's facts (its configurations and budgets);
``algorithms`` the registry and the registered algorithms; ``harness`` a run's training
and scoring; ``report`` the aggregation, tables and plots; ``cli`` the command line.
"""

from __future__ import annotations

from typing import Any

#: The protocol's configurations: each game's default, Förslag's simultaneous board play
#: and Easter collection's secret positions.
CONFIGURATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "pico-2p": ("hiddenhand/pico-v0", {"num_players": 2}),
    "pickup-4p": ("hiddenhand/pickup-v0", {"num_players": 4}),
    "forslag-4p": ("hiddenhand/forslag-v0", {"num_players": 4}),
    "forslag-4p-simultaneous": (
        "hiddenhand/forslag-v0",
        {"num_players": 4, "board_play": "simultaneous"},
    ),
    "pick_and_pack-2p": ("hiddenhand/pick_and_pack-v0", {}),
    "easter_collection-2p": ("hiddenhand/easter_collection-v0", {"num_players": 2}),
    "easter_collection-2p-secret": (
        "hiddenhand/easter_collection-v0",
        {"num_players": 2, "variant": "secret_positions"},
    ),
}
#: Decisions per run, counted over every seat that learns (an SB3 algorithm's learner is
#: one seat, its timesteps; the self-play learner's ``--decisions``): protocol v1's
#: ``small`` and ``large``, protocol v2's ``medium`` (every configuration) and
#: ``large-v2`` (two-player Pico).
BUDGETS = {"small": 50_000, "large": 1_000_000, "medium": 2_000_000, "large-v2": 20_000_000}
#: Seat-rotated games of each run's learned best response against it (``--bound-decisions``).
BOUND_GAMES = 1000
#: Two-player Pico: deals of each run's exact NashConv (drawn with the evaluation seed),
#: unless ``--nash-conv-deals`` says otherwise (protocol v1: 20; v2: 200).
NASHCONV_DEALS = 20


#: A run's panel-score curve (``--curve-games``): ``decisions, panel_score, panel_score_ci``.
PANEL_CURVE = "panel_curve.csv"
