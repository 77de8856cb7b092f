"""The README's Python examples run as written, and its training commands parse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = {
    path: path.read_text() for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}
EXAMPLES = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_readme_example_runs(code, capsys):
    code = re.sub(r"\.learn\([\d_]+\)", ".learn(64)", code)  # one short rollout is enough
    code = code.replace('"MlpPolicy", env,', '"MlpPolicy", env, n_steps=64, batch_size=64,')
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})


TRAIN_COMMANDS = [
    c
    for text in DOCS.values()
    for c in re.findall(r"python -m training\.train (.*)", text)
    if c != "--help"
]


def test_the_readmes_training_commands_parse():
    """Every training command the README and docs/ give is accepted as written."""
    from training.train import parse_args

    assert len(TRAIN_COMMANDS) >= 3
    for command in TRAIN_COMMANDS:
        parse_args(command.replace("\\", " ").strip().strip("`").split())


def test_the_docs_links_lead_to_files():
    """Every relative link in the README and docs/ names a file that exists."""
    links = 0
    for path, text in DOCS.items():
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            links += 1
            assert (path.parent / target).exists(), f"{path.name} links to missing {target}"
    assert links >= 10


def table_rows(text: str) -> list[list[tuple[int, str]]]:
    """The Markdown tables of a text, outside code blocks: each a list of (line number, row)."""
    tables: list[list[tuple[int, str]]] = []
    in_code, previous_was_row = False, False
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("```"):
            in_code = not in_code
        is_row = not in_code and line.startswith("|")
        if is_row and not previous_was_row:
            tables.append([])
        if is_row:
            tables[-1].append((number, line))
        previous_was_row = is_row
    return tables


def cell_count(row: str) -> int:
    return len(re.sub(r"`[^`]*`", "``", row).strip().strip("|").split("|"))


def test_every_docs_table_row_has_its_headers_columns():
    """A row pasted into the wrong table (or a cell lost) shows as a row whose number of
    cells differs from its table's header."""
    checked = 0
    for path, text in DOCS.items():
        for table in table_rows(text):
            header = cell_count(table[0][1])
            for number, row in table:
                assert cell_count(row) == header, (
                    f"{path.name}:{number} has {cell_count(row)} cells, its header {header}"
                )
                checked += 1
    assert checked >= 100


def test_the_sb3_snippet_sets_one_torch_thread():
    """torch's default threads oversubscribe a shared machine (11 min 39 s against 46 s
    with one thread, issue 39): the snippet users copy sets one."""
    (snippet,) = [code for code in EXAMPLES if "MaskablePPO" in code]
    assert "torch.set_num_threads(1)" in snippet
    assert snippet.index("torch.set_num_threads(1)") < snippet.index(".learn(")
