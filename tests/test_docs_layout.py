"""Every game's docstring tables of the observation layout, and the observation size in its
summary table, against the game's ``ObservationLayout`` in every configuration."""

from __future__ import annotations

import ast
import importlib
import math
import operator
import re
from collections.abc import Callable

import envs
from envs.core.game import Game
from envs.core.observation import Field

HEADER = "| indices | field | shape | range | meaning |"

#: Letters a game's tables use besides ``N`` (the number of players), as its docstring
#: defines them.
SYMBOLS: dict[str, Callable[[Game], dict[str, int]]] = {
    # H the hand size; S the score bound, 10H (or target - 1 + 10H in the longer game).
    "hiddenhand/pickup-v0": lambda game: {
        "H": game.hand_size,
        "S": 10 * game.hand_size + (game.target - 1 if game.target else 0),
    },
}


def value(expression: str, symbols: dict[str, int]) -> int:
    """A table's arithmetic: ``35N+11``, ``10N²+38N+60``, ``30 + 25N + H``, ``0``."""
    text = re.sub(r"(\d)([A-Z])", r"\1*\2", expression.replace("²", "**2"))
    operations = {
        ast.Add: operator.add,
        ast.Sub: operator.sub,
        ast.Mult: operator.mul,
        ast.Pow: operator.pow,
    }

    def evaluate(node: ast.expr) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return symbols[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in operations:
            return operations[type(node.op)](evaluate(node.left), evaluate(node.right))
        raise ValueError(f"cannot read {expression!r}")

    return evaluate(ast.parse(text.strip(), mode="eval").body)


def bounds(text: str, symbols: dict[str, int]) -> tuple[int, int]:
    """``a - b``, ``a-b`` (no arithmetic with a minus sign on either side) or one index."""
    parts = text.split(" - ") if " - " in text else text.split("-")
    return value(parts[0], symbols), value(parts[-1], symbols)


def layout_tables(doc: str) -> list[tuple[str, list[list[str]]]]:
    """The docstring's observation layout tables: the heading each stands under, its rows."""
    tables: list[tuple[str, str, list[list[str]]]] = []
    heading, rows = "", None
    for line in doc.splitlines():
        if line.startswith("#"):
            heading = line
        if not line.startswith("|"):
            rows = None
        elif rows is None:
            rows = []
            tables.append((heading, line, rows))
        elif not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return [(heading, rows) for heading, header, rows in tables if header == HEADER]


def described(first: int, last: int, shape: tuple[int, ...], low: float, high: float) -> str:
    return f"{first}-{last} | {' × '.join(map(str, shape))} | {low:g}-{high:g}"


def differences(row: list[str], field: Field, part: bool, symbols: dict[str, int]) -> list[str]:
    """What a row says that its field does not: the whole field, or (``part``) a part of it
    (a span inside the field's, of the span's length, values in the field's range)."""
    span, name, shape, limits, _ = row
    first, last = bounds(span, symbols)
    sizes = tuple(value(factor, symbols) for factor in shape.split("×"))
    low, high = bounds(limits, symbols)
    actual = field.start, field.stop - 1, field.shape, field.low, field.high
    if part:
        fits = (
            field.start <= first <= last < field.stop
            and math.prod(sizes) == last - first + 1
            and field.low <= low <= high <= field.high
        )
        whole = "a part of the field"
    else:
        fits = (first, last, sizes, low, high) == actual
        whole = "the field"
    if fits:
        return []
    return [
        f"{name}: documented {span} | {shape} | {limits} (here {described(first, last, sizes, low, high)}),"
        f" not {whole}: {described(*actual)}"
    ]


def test_docstring_layout_table_matches_the_layout(env_id, config):
    """Every field in a table that applies, with its index range, shape and value range;
    nothing else; and the documented observation size."""
    spec = envs.get_spec(env_id)
    doc = importlib.import_module(spec.game_class.__module__.rsplit(".", 1)[0]).__doc__
    game = spec.make_game(**config)
    layout = game.observation_layout
    symbols = {"N": game.num_players} | SYMBOLS.get(env_id, lambda game: {})(game)
    tables = layout_tables(doc)
    assert tables, "no observation layout table in the docstring"
    found: list[str] = []
    documented = set()
    # The first table is the layout; a later one (a variant's changes) applies when the
    # heading above it names an option value of this configuration: ### `aside="face_down"`.
    for k, (heading, rows) in enumerate(tables):
        if k > 0:
            condition = re.search(r'`(\w+)="(\w+)"`', heading)
            assert condition, f"which configurations does the table under {heading!r} describe?"
            option, choice = condition.groups()
            if config.get(option) != choice:
                continue
        for row in rows:
            # A row names a field, or a part of one: `hand` (other seat's row).
            name, qualifier = re.fullmatch(r"`(\w+)`(.*)", row[1]).groups()
            if name not in layout.fields:
                found.append(f"`{name}` is not a field of the layout")
                continue
            part = bool(qualifier.strip())
            found += differences(row, layout.fields[name], part, symbols)
            if not part:
                documented.add(name)
    found += [f"`{name}` is missing" for name in layout.fields if name not in documented]
    # The summary table's observation size, with any option's own size after it.
    summary = re.search(r"^\| Observation space \|(.*)$", doc, re.M).group(1)
    size = re.search(r"observation=Box\(float32, \((.+?),\)\)", summary).group(1)
    for option, choice, own in re.findall(r'`(\w+)="(\w+)"`: `\((.+?),\)`', summary):
        if config.get(option) == choice:
            size = own
    if value(size, symbols) != layout.size:
        found.append(f"size {size} = {value(size, symbols)}, the layout has {layout.size}")
    assert not found, "\n".join(found)


def test_every_game_docstring_lists_every_render_mode():
    """The arguments table's ``render_mode`` row names each mode the envs accept."""
    from envs.core.render import RENDER_MODES

    for spec in envs.GAMES:
        doc = importlib.import_module(spec.game_class.__module__.rsplit(".", 1)[0]).__doc__
        row = re.search(r"^\| `render_mode` \|.*$", doc, re.M)
        assert row, f"{spec.name}: no render_mode row"
        missing = [mode for mode in RENDER_MODES if f'"{mode}"' not in row.group(0)]
        assert not missing, f"{spec.name}'s render_mode row omits {missing}"
