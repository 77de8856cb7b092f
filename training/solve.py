"""Solve two-player Pico exactly: the equilibrium value of a deal for player_0.

    python -m training.solve --env hiddenhand/pico-v0 --seed 3 --objective win
    python -m training.solve --env hiddenhand/pico-v0 --all-deals --objective win

``--seed S`` solves the deal that ``envs.pico.raw_env().reset(seed=S)`` makes;
``--all-deals`` averages the value over all 2,772 deals (each equally likely).
Objectives: ``win`` (the env's default reward: +1, 0 or -1 at the end) or ``score``
(the final score margin). See ``training.solvers.pico`` for the method.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from envs.core.spec import get_spec
from training.cli import tool_parser
from training.solvers.pico import OBJECTIVES, PicoSolver, Position, all_deals


def main(argv: Sequence[str] | None = None) -> None:
    parser = tool_parser("training.solve", __doc__)
    parser.add_argument("--env", default="hiddenhand/pico-v0", help="only two-player Pico")
    parser.add_argument("--num-players", type=int, default=2, help="only 2 is solvable")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--seed", type=int, default=0, help="the env's reset seed of the deal")
    which.add_argument("--all-deals", action="store_true", help="average over every deal")
    parser.add_argument("--objective", default="win", help="win or score")
    args = parser.parse_args(argv)
    try:
        spec = get_spec(args.env)
    except ValueError as error:
        parser.error(str(error))
    if spec.name != "pico":
        parser.error(f"only two-player Pico (hiddenhand/pico-v0) is solvable, not {args.env}")
    if args.num_players != 2:
        parser.error(
            f"only two-player Pico is solvable (both hands are public); "
            f"got --num-players {args.num_players}"
        )
    if args.objective not in OBJECTIVES:
        parser.error(f"--objective must be one of {', '.join(OBJECTIVES)}, got {args.objective!r}")
    game = spec.make_game(num_players=2)
    solver = PicoSolver.for_game(game, args.objective)
    start = time.perf_counter()
    if args.all_deals:
        deals = all_deals()
        values = np.array([solver.value(Position.deal(*deal)) for deal in deals])
        seconds = time.perf_counter() - start
        print(
            f"mean equilibrium value for player_0 over all {len(deals)} deals "
            f"({args.objective}): {values.mean():.6f}; mean |value| {np.abs(values).mean():.6f}; "
            f"non-zero in {np.mean(np.abs(values) > 1e-9):.2%} of deals; "
            f"from {values.min():.6f} to {values.max():.6f}"
        )
    else:
        from envs.pico import raw_env

        env = raw_env(num_players=2)
        env.reset(seed=args.seed)
        state = env.unwrapped.table.state
        print(state)
        value = solver.value(Position.from_state(state))
        seconds = time.perf_counter() - start
        print(f"equilibrium value for player_0 ({args.objective}): {value:.6f}")
    print(f"solved in {seconds:.2f} s ({len(solver)} positions memoised)")


if __name__ == "__main__":
    main()
