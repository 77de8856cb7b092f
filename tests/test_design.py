"""The design's one-way dependencies and plain shapes: no import circle anywhere in
``envs`` or ``training``, nothing under ``envs`` names ``training`` (its agents arrive
through the ``hiddenhand.agents`` entry point), ``envs`` imports without SB3, no class is
made inside a function, and every ``"module:attribute"`` string names something.

Every import counts, wherever it is written: at the top, inside a function (a deferred
import) or under ``TYPE_CHECKING``, since each is an arrow a reader has to follow.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENVS = ROOT / "envs"
TRAINING = ROOT / "training"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Every module ``path`` imports, by absolute name: ``from a import b`` counts ``a.b``
    when that is one of ``modules`` (a submodule), else ``a``. A module's parent packages,
    which Python runs first, are not counted."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path.parent)
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                names.add(submodule if submodule in modules else base)
    return names


def import_graph(folder: Path) -> dict[str, set[str]]:
    """Each module under ``folder`` -> the modules under it that it imports."""
    modules = {module_name(p): p for p in folder.rglob("*.py")}
    return {
        name: {m for m in imported_modules(path, set(modules)) if m in modules and m != name}
        for name, path in modules.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (a list of modules ending where it starts), or None."""
    done: set[str] = set()
    for start in graph:
        stack, on_path = [(start, iter(sorted(graph[start])))], [start]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.pop()
                done.add(node)
            elif child in on_path:
                return [*on_path[on_path.index(child) :], child]
            elif child not in done:
                stack.append((child, iter(sorted(graph[child]))))
                on_path.append(child)
    return None


def test_the_cycle_finder_finds_a_deferred_circle(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize("folder", [ENVS, TRAINING], ids=["envs", "training"])
def test_no_import_circle(folder):
    graph = import_graph(folder)
    assert len(graph) > 20 and any(graph.values())
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_envs_imports_without_sb3():
    """``import envs`` and a batched engine need numpy, Gymnasium and PettingZoo only:
    ``make_vec`` imports SB3 when called (``envs.core.sb3_vec_env``)."""
    code = (
        "import sys, envs\n"
        "envs.get_spec('hiddenhand/pico-v0').engine(4, seed=0)\n"
        "heavy = {'stable_baselines3', 'sb3_contrib', 'torch', 'ray', 'scipy'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_no_class_is_made_inside_a_function():
    """Classes at module level: one definition a reader finds, picklable, not remade at
    every call."""
    offenders = [
        f"{path.relative_to(ROOT)}:{inner.lineno} {inner.name} in {node.name}()"
        for folder in (ENVS, TRAINING)
        for path in folder.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
        if isinstance(inner, ast.ClassDef)
    ]
    assert not offenders, offenders


def code_strings(path: Path) -> list[str]:
    """The string constants of a module's code: every one but the docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_nothing_under_envs_names_training():
    """No import of ``training`` and no ``"training...."`` string (an entry point in
    disguise) in any module's code; docstrings may mention it."""
    offenders = []
    for path in ENVS.rglob("*.py"):
        if any(m == "training" or m.startswith("training.") for m in imported_modules(path)):
            offenders.append(f"{path.relative_to(ROOT)} imports training")
        offenders += [
            f"{path.relative_to(ROOT)} names {text!r}"
            for text in code_strings(path)
            if text.startswith("training.")
        ]
    assert not offenders, offenders


#: A ``"module:attribute"`` string naming an object of this project.
NAMED_OBJECT = re.compile(r"^(envs|training)(\.\w+)*:\w+$")


def test_every_module_attribute_string_resolves():
    """The objects named by strings (where naming them spares a heavy import, and the
    entry points) exist: a rename breaks this test, not a run."""
    named = {
        text
        for folder in (ENVS, TRAINING)
        for path in folder.rglob("*.py")
        for text in code_strings(path)
        if NAMED_OBJECT.match(text)
    }
    named |= {point.value for point in entry_points(group="hiddenhand.agents")}
    assert "training.agents:register" in named and len(named) >= 4
    for text in sorted(named):
        module, attribute = text.split(":")
        assert hasattr(importlib.import_module(module), attribute), f"{text} names nothing"
