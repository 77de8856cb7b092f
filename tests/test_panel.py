"""The opponent panel: who is on it for each configuration, and how it scores an agent."""

from __future__ import annotations

import json

import numpy as np
import pytest

import envs
from envs.core.agents import RandomAgent
from training import evaluate
from training.evaluation.panel import above_chance, panel_members, panel_score


@pytest.mark.parametrize(
    "env_id, options, expected",
    [
        ("hiddenhand/pico-v0", {}, ["random", "heuristic", "pimc", "ismcts", "ppo", "nash"]),
        (
            "hiddenhand/pico-v0",
            {"num_players": 3},
            ["random", "heuristic", "pimc", "ismcts", "ppo"],
        ),
        ("hiddenhand/forslag-v0", {}, ["random", "heuristic", "expert", "pimc", "ismcts", "ppo"]),
        (
            "hiddenhand/pickup-v0",
            {"num_players": 3},
            ["random", "heuristic", "pimc", "ismcts", "ppo"],
        ),
    ],
)
def test_the_panel_holds_every_member_that_exists_for_the_configuration(env_id, options, expected):
    spec = envs.get_spec(env_id)
    assert list(panel_members(spec, spec.make_game(**options))) == expected


def test_a_configuration_without_a_shipped_agent_has_a_panel_without_one(monkeypatch, tmp_path):
    import training.agents.policy as policy

    monkeypatch.setattr(policy, "BASELINES", tmp_path)  # nothing shipped here
    spec = envs.get_spec("hiddenhand/forslag-v0")
    game = spec.make_game(board_play="simultaneous")
    assert list(panel_members(spec, game)) == ["random", "heuristic", "expert", "pimc", "ismcts"]


def test_scores_are_win_rates_above_chance_and_their_mean():
    assert above_chance(0.25, 4) == 0.0 and above_chance(1.0, 4) == 1.0
    assert above_chance(0.0, 2) == -1.0 and above_chance(0.75, 2) == pytest.approx(0.5)
    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    members = {"random": RandomAgent(game), "heuristic": spec.make_agent("heuristic", game)}
    result = panel_score(
        game, spec.make_agent("heuristic", game), members, games=40, skip="heuristic"
    )
    assert list(result["members"]) == ["random"]  # not scored against itself
    row = result["members"]["random"]
    assert row["above_chance"] == pytest.approx(2 * row["win_rate"] - 1)
    assert result["panel_score"] == row["above_chance"] > 0.2  # the heuristic beats random
    assert result["panel_score_ci"] == pytest.approx(row["above_chance_ci"])


def test_search_members_play_their_own_number_of_games():
    from training.evaluation.panel import SEARCH_BUDGETS

    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game()
    members = {"random": RandomAgent(game), "pimc": RandomAgent(game)}  # named as the panel's
    assert "pimc" in SEARCH_BUDGETS
    result = panel_score(game, RandomAgent(game), members, games=10, search_games=4)
    assert result["members"]["random"]["games"] == 10
    assert result["members"]["pimc"]["games"] == 4
    assert (result["games"], result["search_games"]) == (10, 4)


def test_evaluate_panel_prints_a_table_and_json(capsys, monkeypatch):
    import training.evaluation.panel as panel

    monkeypatch.setattr(
        panel, "SEARCH_BUDGETS", {"pimc": {"samples": 4}, "ismcts": {"iterations": 4}}
    )
    evaluate.main(
        ["--env", "hiddenhand/pico-v0", "--panel", "--agents", "random", "--games", "6",
         "--search-games", "2"]
    )  # fmt: skip
    captured = capsys.readouterr()
    out = captured.out
    assert "| **panel score** |" in out
    assert "| pimc | " in out and out.split("| pimc | ")[1].split("\n")[0].endswith("| 2 |")
    scores = json.loads(out.strip().splitlines()[-1])["scores"]["random"]
    assert set(scores["members"]) == {"heuristic", "pimc", "ismcts", "ppo", "nash"}
    assert np.isfinite(scores["panel_score"])
    # the scale: chance, and the shipped agent's panel score (docs/results.md)
    assert "| *reference: chance* | 0.500 | +0.000 | |" in out
    shipped, interval = panel.SHIPPED_PANEL_SCORES["pico_2p"]
    assert f"the shipped agent (ppo), panel score* | | {shipped:+.3f} ± {interval:.3f} |" in out
    # progress: a line to stderr as each member's series finishes
    lines = captured.err.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"random against {m}" for m in ("heuristic", "pimc", "ismcts", "ppo", "nash")
    ]


def test_evaluate_panel_defaults_to_the_benchmark_protocols_scoring(capsys, monkeypatch):
    """The README's ``--panel`` command scores as the benchmark does (its games per member,
    per search member and evaluation seed), not with the 2,000 games of a pair table."""
    import training.evaluation.panel as panel

    asked = {}

    def recorded(game, agent, members, games, seed=0, skip="", search_games=None, progress=None):
        asked.update(games=games, seed=seed, search_games=search_games)
        return panel_score(game, agent, {"random": members["random"]}, 2, seed, skip, 2)

    monkeypatch.setattr(panel, "panel_score", recorded)
    evaluate.main(["--env", "hiddenhand/pico-v0", "--panel", "--agents", "heuristic"])
    assert asked == {
        "games": panel.EVAL_GAMES,
        "seed": panel.EVAL_SEED,
        "search_games": panel.EVAL_SEARCH_GAMES,
    }
    assert "(the benchmark protocol)" in capsys.readouterr().out
    evaluate.main(
        ["--env", "hiddenhand/pico-v0", "--panel", "--agents", "heuristic", "--games", "7",
         "--search-games", "3", "--seed", "5"]
    )  # fmt: skip
    assert asked == {"games": 7, "seed": 5, "search_games": 3}
    assert "(the benchmark protocol)" not in capsys.readouterr().out
    for argv, message in (
        (["--agents", "heuristic", "random", "--search-games", "3"], "only with --panel"),
        (["--panel", "--agents", "heuristic", "--search-games", "0"], "--search-games must be at"),
        (["--panel", "--agents", "heuristic", "--games", "0"], "--games must be at least 1, got 0"),
    ):
        with pytest.raises(SystemExit):
            evaluate.main(["--env", "hiddenhand/pico-v0", *argv])
        assert message in capsys.readouterr().err


def test_the_shipped_panel_scores_are_the_results_tables():
    """The reference line's scores (``SHIPPED_PANEL_SCORES``) are docs/results.md's panel
    score column, one for every shipped configuration."""
    import re
    from pathlib import Path

    from training.agents.policy import baseline_name, shipped_files
    from training.evaluation.panel import SHIPPED_PANEL_SCORES

    games = {"Pico": "pico", "Pickup": "pickup", "Förslag": "forslag"}
    games |= {"Pick & Pack": "pick_and_pack", "Easter collection": "easter_collection"}
    text = (Path(__file__).parent.parent / "docs" / "results.md").read_text()
    label = re.compile(rf"\| ({'|'.join(games)}), (\d) players((?:, `[^`]*`)*) \|")
    table = {}
    for line in text.splitlines():
        cells = line.split(" | ")
        if (found := label.match(line)) and len(cells) > 6:  # the shipped table's rows
            spec = envs.get_spec(f"hiddenhand/{games[found[1]]}-v0")
            options = spec.game_class.config_class.parse_options(re.findall(r"`([^`]*)`", found[3]))
            name = baseline_name(spec.make_game(num_players=int(found[2]), **options))
            table[name] = cells[5]
    expected = {name: f"{s:+.3f} ± {ci:.3f}" for name, (s, ci) in SHIPPED_PANEL_SCORES.items()}
    assert table == expected
    shipped = {p.stem for p in shipped_files()}
    assert set(expected) == shipped


def configurations():
    return [(spec, config) for spec in envs.GAMES for config in spec.configurations]


def test_panel_v2s_trained_members_are_the_files_it_was_fixed_with():
    """Replacing a shipped agent must not change the panel: its old file is kept for the
    panel in training/evaluation/panel_v2/ (or the panel gets a new version)."""
    import hashlib
    from pathlib import Path

    from training.agents.policy import baseline_name
    from training.evaluation.panel import panel_policy_path

    pinned = json.loads((Path(__file__).parent / "data" / "panel_v2.json").read_text())
    found = {}
    for spec, config in configurations():
        game = spec.make_game(**config)
        path = panel_policy_path(game)  # the weights and the metadata (how it plays)
        found[baseline_name(game)] = hashlib.sha256(
            path.read_bytes() + path.with_suffix(".json").read_bytes()
        ).hexdigest()
    changed = sorted(name for name in pinned if found.get(name) != pinned[name])
    assert not changed, (
        f"panel-v2's ppo member changed for {changed}: keep the agent it was fixed with in "
        "training/evaluation/panel_v2/ under its file name (git show), or define a new panel"
    )
    assert set(found) == set(pinned)


def test_a_kept_panel_agent_is_the_panels_ppo_member_not_the_shipped_one(monkeypatch, tmp_path):
    import shutil

    import training.evaluation.panel as panel
    from training.agents.policy import baseline_path

    spec = envs.get_spec("hiddenhand/pico-v0")
    game = spec.make_game(num_players=3)
    assert panel.panel_policy_path(game) == baseline_path(game)  # nothing kept here
    shipped = baseline_path(game)
    kept = shutil.copy(shipped, tmp_path / shipped.name)
    meta = json.loads(shipped.with_suffix(".json").read_text()) | {"play": "sample"}
    (tmp_path / shipped.with_suffix(".json").name).write_text(json.dumps(meta))
    monkeypatch.setattr(panel, "KEPT_POLICIES", tmp_path)
    assert panel.panel_policy_path(game) == kept
    member = panel_members(spec, game)["ppo"]
    assert not member.deterministic  # the kept file's metadata, not the shipped agent's
    assert spec.make_agent("ppo", game).deterministic
