"""Command-line arguments that every tool which builds a game shares, written once, and
the parser every ``python -m training.X`` tool starts from (``tool_parser``).

``--env``, ``--num-players`` and the repeatable ``--option key=value`` (typed by the
game's ``Config``: ``Config.parse_options``), checked together into a game before
anything else happens, with an argparse error that names what is allowed.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import os
import shlex
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.game import Game
from envs.core.spec import GameSpec, all_ids, get_spec

OPTION_HELP = (
    "a game option as key=value, typed by the game (e.g. board_play=simultaneous, "
    "variant=secret_positions, placement=alternate, target_score=100); repeatable"
)


def tool_parser(
    module: str,
    doc: str,
    formatter_class: type[argparse.HelpFormatter] = argparse.RawDescriptionHelpFormatter,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """The parser of ``python -m <module>``: its usage names that command (argparse's
    default is the file's name, ``train.py``), its description the docstring's first
    paragraph."""
    return argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc.split("\n\n")[0],
        formatter_class=formatter_class,
        **kwargs,
    )


def one_torch_thread() -> None:
    """One thread for torch in a tool that may load a torch model (an SB3 agent), unless
    the environment already says how many (``OMP_NUM_THREADS``): torch's default of one
    thread per core oversubscribes a shared machine. Call it before torch is imported;
    the trainers set theirs with ``--threads`` / ``torch.set_num_threads``."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def parse_mixture(text: str, flag: str) -> dict[str, float]:
    """A mixture of agents, ``NAME_OR_PATH:weight`` pairs separated by commas, the weight 1
    where none is given (``--opponents`` of ``training.train``, ``--opponent`` of
    ``training.selfplay``). A text that names an existing path is that one member, so a
    model's path may hold commas and colons. ValueError, naming ``flag``, for a weight
    that is not a number, a negative or infinite one, a zero sum, or a member named twice."""
    if Path(text).exists():
        return {text: 1.0}
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, colon, weight = part.strip().rpartition(":")
        if not colon:
            name, weight = weight, "1"
        try:
            value = float(weight)
        except ValueError:
            raise ValueError(
                f"{flag} {text!r}: {weight!r} is not a weight; a mixture is "
                "NAME_OR_PATH:weight pairs, e.g. random:1,heuristic:3"
            ) from None
        if not name or name in mix:
            raise ValueError(f"{flag} {text!r}: every member needs a name, once")
        mix[name] = value
    weights = np.array(list(mix.values()))
    if not (np.isfinite(weights) & (weights >= 0)).all() or not weights.sum() > 0:
        raise ValueError(f"{flag} {text!r}: the weights must be at least 0, with a positive sum")
    return mix


def add_game_arguments(parser: argparse.ArgumentParser, env_default: str | None = None) -> None:
    parser.add_argument(
        "--env",
        required=env_default is None,
        default=env_default,
        help="game id, either form (e.g. hiddenhand/pico-v0)",
    )
    parser.add_argument("--num-players", type=int, default=None, help="default: the game's own")
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help=OPTION_HELP
    )


def game_options(spec: GameSpec, num_players: int | None, texts: list[str]) -> dict[str, Any]:
    """The options ``--num-players`` and ``--option`` give (ValueError if one is wrong)."""
    options = spec.game_class.config_class.parse_options(texts)
    if num_players is not None:
        options["num_players"] = num_players
    return options


def game_from_args(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[GameSpec, dict[str, Any], Game]:
    """The spec, the options and the game the arguments name; an argparse error (exit 2)
    naming what is allowed if any of them is wrong."""
    try:
        spec = get_spec(args.env)
    except ValueError:
        parser.error(f"unknown --env {args.env!r}; games: {', '.join(all_ids())}")
    try:
        options = game_options(spec, args.num_players, args.option)
        game = spec.make_game(**options)
    except (ValueError, TypeError) as error:
        parser.error(f"{spec.aec_id}: {error}")
    return spec, options, game


def arg(default: Any, help: str) -> Any:
    """A documented field of a command's arguments dataclass (see ``dataclass_parser``)."""
    return dataclasses.field(default=default, metadata={"help": help})


def list_arg(default: list[str], help: str, nargs: str | None = None) -> Any:
    """A documented ``list[str]`` field: a repeatable ``--x KEY=VALUE`` flag, or with
    ``nargs`` (``"+"``) one flag taking several values."""
    metadata = {"help": help} | ({"nargs": nargs} if nargs else {})
    return dataclasses.field(default_factory=lambda: list(default), metadata=metadata)


def flag_of(name: str) -> str:
    return "--" + name.replace("_", "-")


def dataclass_parser(module: str, doc: str, args_class: type) -> argparse.ArgumentParser:
    """The parser of ``python -m <module>`` with one flag per field of ``args_class`` (a
    dataclass whose fields carry ``help`` metadata, see ``arg`` and ``list_arg``):
    ``--snake-case`` names, ``bool`` as ``--x``/``--no-x``, ``list[str]`` repeatable (or
    taking ``nargs`` values), other types from the annotation."""
    parser = tool_parser(module, doc, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    kinds = {"int": int, "float": float, "str": str, "int | None": int, "float | None": float}
    for f in dataclasses.fields(args_class):
        flag, help = flag_of(f.name), f.metadata["help"]
        if f.type == "bool":
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=f.default, help=help
            )
        elif f.type == "list[str]" and "nargs" in f.metadata:
            parser.add_argument(
                flag, nargs=f.metadata["nargs"], default=f.default_factory(), help=help
            )
        elif f.type == "list[str]":
            parser.add_argument(flag, action="append", default=[], metavar="KEY=VALUE", help=help)
        else:
            parser.add_argument(flag, type=kinds[f.type], default=f.default, help=help)
    return parser


def given_fields(parser: argparse.ArgumentParser, argv: list[str] | None) -> set[str]:
    """The fields ``argv`` sets (``None``: the command line's), not left at their defaults."""
    quiet = copy.deepcopy(parser)
    for action in quiet._actions:
        action.default = argparse.SUPPRESS
    return set(vars(quiet.parse_args(argv)))


def command_line(module: str, args: Any) -> str:
    """The command that reproduces ``args`` (a dataclass instance; every field spelled out)."""
    words = ["python", "-m", module]
    for f in dataclasses.fields(args):
        value, flag = getattr(args, f.name), flag_of(f.name)
        if isinstance(value, bool):
            words.append(flag if value else flag_of("no_" + f.name))
        elif isinstance(value, list) and "nargs" in f.metadata:
            words += [flag, *value] if value else []
        elif isinstance(value, list):
            for item in value:
                words += flag_and_value(flag, item)
        elif value is not None and value != "":
            words += flag_and_value(flag, str(value))
    return shlex.join(words)


def flag_and_value(flag: str, value: str) -> list[str]:
    """``--flag value``, or ``--flag=value`` where the value starts with '-' (which
    argparse would otherwise read as a flag of its own, as in ``--range -25,25``)."""
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]
