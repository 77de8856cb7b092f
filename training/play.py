"""Play a game in the terminal against agents.

    python -m training.play --env hiddenhand/pico-v0 --opponent heuristic
    python -m training.play --env hiddenhand/pickup-v0 --num-players 3 --opponent random --seat 1
    python -m training.play --env hiddenhand/forslag-v0 --option board_play=simultaneous \\
        --opponent expert --seed 7
    python -m training.play --env hiddenhand/pico-v0 --opponent runs/pico-2p-seed0/model.zip

You play one seat (``--seat``, default 0); the opponent (a name the game knows, such as
``random``, ``heuristic`` or ``ppo``, or a saved model's path) plays every other seat.
Whenever you must choose, you see your own view of the table (the public table, your own
hand or secret set-up, your face-down choice and who else has committed, never what) and
your legal moves, numbered by action id; type a number, or ``q`` to quit. The table is
shown again after each reveal of a simultaneous choice (``--- revealed ---``) and after
each open move of one player, such as a pickup in Pickup (``--- after player_2's move
---``); at the end, the final table, the scores and who won.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import numpy as np

from envs.core.aec import HiddenHandAEC
from envs.core.agents import Agent, decide, uses_observation
from envs.core.spec import GameSpec
from training.cli import add_game_arguments, game_from_args, one_torch_thread, tool_parser
from training.evaluation.tournament import make_agent

QUIT_WORDS = ("q", "quit", "exit")
LINE_WIDTH = 100


class Quit(Exception):
    """The person at the terminal left the game (``q``, end of input or Ctrl-C)."""


def build_parser() -> argparse.ArgumentParser:
    parser = tool_parser("training.play", __doc__, epilog=__doc__.split("\n\n", 1)[1])
    add_game_arguments(parser)
    parser.add_argument(
        "--opponent",
        required=True,
        help="agent in every other seat: random, heuristic, ppo, ... or a saved model's path",
    )
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 to N-1 (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deal and the agents")
    return parser


def setup(
    argv: Sequence[str] | None,
) -> tuple[argparse.Namespace, GameSpec, HiddenHandAEC, Agent]:
    """Parse and check every argument before the game starts (argparse errors name what is
    allowed); return the arguments, the spec, the env and the opponent agent."""
    one_torch_thread()
    parser = build_parser()
    args = parser.parse_args(argv)
    spec, options, _ = game_from_args(parser, args)
    env = HiddenHandAEC(spec, illegal_action="raise", **options)  # what raw_env() makes
    n = env.game.num_players
    if not 0 <= args.seat < n:
        parser.error(f"--seat {args.seat} is not a seat of this {n}-player game; seats: 0-{n - 1}")
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    try:
        opponent = make_agent(spec, env.game, args.opponent)
    except (ValueError, ImportError) as error:
        parser.error(f"--opponent {args.opponent!r}: {error}")
    return args, spec, env, opponent


def id_ranges(ids: list[int]) -> str:
    """Sorted action ids as text with runs shortened: ``0, 2, 5-9``."""
    runs: list[list[int]] = []
    for a in ids:
        if runs and a == runs[-1][-1] + 1:
            runs[-1].append(a)
        else:
            runs.append([a])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def moves_text(env: HiddenHandAEC, legal: list[int]) -> str:
    """The legal moves as ``id: name`` entries, packed into columns."""
    entries = [f"{a:>3}: {env.game.action_name(a)}" for a in legal]
    width = max(map(len, entries)) + 2
    per_line = max(1, LINE_WIDTH // width)
    lines = [
        "".join(entry.ljust(width) for entry in entries[i : i + per_line]).rstrip()
        for i in range(0, len(entries), per_line)
    ]
    return "\n".join(lines)


def ask_move(
    env: HiddenHandAEC,
    legal: list[int],
    input_fn: Callable[[str], str],
    print_fn: Callable[..., None],
) -> int:
    """Read a legal action id; re-ask on anything else, saying what is allowed. Raises
    ``Quit`` on ``q``, end of input or Ctrl-C."""
    allowed = id_ranges(legal)
    while True:
        try:
            text = input_fn("your move (number, or q to quit): ").strip()
        except (EOFError, KeyboardInterrupt) as stop:
            print_fn("")  # end the prompt's line
            reason = "end of input" if isinstance(stop, EOFError) else "interrupted"
            raise Quit(reason) from None
        if text.lower() in QUIT_WORDS:
            raise Quit("you quit")
        if not text:
            print_fn(f"type the number of a move: one of {allowed} (or q to quit)")
            continue
        try:
            action = int(text)
        except ValueError:
            print_fn(f"{text!r} is not a number; type one of {allowed} (or q to quit)")
            continue
        if not 0 <= action < env.game.num_actions:
            print_fn(
                f"{action} is not a move of this game (moves are 0-{env.game.num_actions - 1}); "
                f"legal now: {allowed}"
            )
            continue
        if action not in legal:
            print_fn(
                f"{action} ({env.game.action_name(action)}) is not legal now; legal: {allowed}"
            )
            continue
        return action


def result_lines(env: HiddenHandAEC, human: int, opponent_name: str) -> list[str]:
    """The scores and the winner(s)."""
    scores = env.table.state.scores()
    names = [f"player_{p} ({'you' if p == human else opponent_name})" for p in range(len(scores))]
    lines = ["scores: " + ", ".join(f"{names[p]} {s:g}" for p, s in enumerate(scores))]
    winners = np.flatnonzero(scores == scores.max()).tolist()
    if len(winners) == 1:
        lines.append(f"winner: {names[winners[0]]}")
    else:
        lines.append("tie between " + " and ".join(names[p] for p in winners))
    if human in winners:
        lines.append("you win!" if len(winners) == 1 else "you share the win.")
    else:
        lines.append("you lose.")
    return lines


def main(
    argv: Sequence[str] | None = None,
    input_fn: Callable[[str], str] = input,
    print_fn: Callable[..., None] = print,
) -> int:
    args, spec, env, opponent = setup(argv)
    human, me = args.seat, env.possible_agents[args.seat]
    env.reset(seed=args.seed)  # the deal and the game's chance events
    rng = np.random.default_rng(None if args.seed is None else [args.seed, 1])  # the agents
    print_fn(
        f"{spec.aec_id}, {env.game.num_players} players: you are {me}; "
        f"{args.opponent} plays every other seat. Type q to quit."
    )
    shown = ""  # the view last printed: printed again only when it changed

    def show(header: str) -> None:
        """Print your view if it changed; only the new lines if it just grew (a commitment)."""
        nonlocal shown
        view = env.render_for(me)
        if view != shown:
            grown = shown and view.startswith(shown + "\n")
            print_fn(f"\n--- {header} ---\n{view[len(shown) + 1 :] if grown else view}")
            shown = view

    show("the deal")
    while not env.table.terminal:
        agent = env.agent_selection
        player = env.agent_ids[agent]
        # The last commitment of a choice: a reveal when several chose at once, else one
        # player's open move (a Pickup pickup, a turn in Förslag's in-turn board play).
        last = len(env.table.waiting_for()) == 1
        together = len(env.table.choosers) > 1
        if player == human:
            show(f"your turn ({me})")
            legal = np.flatnonzero(env.table.legal_mask(player)).tolist()
            print_fn("your legal moves:\n" + moves_text(env, legal))
            try:
                action = ask_move(env, legal, input_fn, print_fn)
            except Quit as reason:
                print_fn(f"quitting ({reason}): the game is abandoned, nothing was scored.")
                return 0
        else:
            mask = env.table.legal_mask(player)
            observation = env.table.observation(player) if uses_observation(opponent) else None
            action = decide(opponent, env.table.state, player, observation, mask, rng)
        env.step(action)
        if last and not env.table.terminal:
            mover = "your" if player == human else f"{agent}'s"
            show("revealed" if together else f"after {mover} move")

    print_fn(f"\n--- game over ---\n{env.render_for(me)}")
    for line in result_lines(env, human, args.opponent):
        print_fn(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
