"""Human play: each seat's own view (``Table.render_for``) and the terminal game
(``python -m training.play``), driven with scripted input."""

from __future__ import annotations

import re

import numpy as np
import pytest

import envs
from envs.core.aec import HiddenHandAEC
from envs.core.table import Table
from envs.easter_collection.rules import card_name as easter_card
from envs.forslag.rules import card_name as forslag_card
from training import play

PICO, PICKUP = "hiddenhand/pico-v0", "hiddenhand/pickup-v0"


# --- the per-seat view -------------------------------------------------------------------
def own_hand(state, player: int) -> str | None:
    """``player``'s hand as each game names its cards, worked out here from the counts;
    None for a game without hidden hands."""
    name = state.game.name
    if name == "pickup":
        ranks = np.repeat(np.arange(10), state.hands[player])[::-1]
        return " ".join(str(r + 1) for r in ranks) or "-"
    if name == "forslag":
        cards = np.repeat(np.arange(25), state.hands[player].astype(np.int64))
        return ", ".join(forslag_card(c) for c in cards) or "-"
    if name == "easter_collection":
        return " ".join(easter_card(c) for c in np.flatnonzero(state.hands[player])) or "-"
    return None


def random_tables(env_id: str, config: dict, seed: int):
    """A table before every commitment of one random game (the live table: read only)."""
    game = envs.get_spec(env_id).make_game(**config)
    table = Table(game)
    table.reset(np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    while not table.terminal:
        yield table
        player = table.next_chooser()
        table.commit(player, int(rng.choice(np.flatnonzero(table.legal_mask(player)))))
    yield table


def test_render_for_shows_own_private_cards_and_nothing_of_others(env_id, config):
    """A seat's view is the same in the real game and in every game it cannot tell from it
    (so it holds nothing of another player's hidden cards or choices), holds its own hand,
    and differs from another seat's view where their hands differ."""
    rng = np.random.default_rng(0)
    for step, table in enumerate(random_tables(env_id, config, seed=3)):
        if step % 2:
            continue
        state, n = table.state, table.game.num_players
        views = [table.render_for(p) for p in range(n)]
        for p in range(n):
            assert views[p].startswith(str(state))  # the spectator's table, then the private
            assert table.determinise(p, rng).render_for(p) == views[p]
            hand = own_hand(state, p)
            if hand is not None:
                assert f"your hand (player_{p}): {hand}" in views[p].splitlines()
                for q in range(n):
                    if q != p and own_hand(state, q) != hand:
                        mine = views[p].replace(f"player_{p}", "me")
                        assert mine != views[q].replace(f"player_{q}", "me")
            if p in table.pending:
                own = table.game.action_name(table.pending[p])
                assert f"(you committed {own} face down)" in views[p]
            others = [q for q in sorted(table.pending) if q != p]
            if others:  # who has committed is public, never what
                assert (
                    "committed face down: " + ", ".join(f"player_{q}" for q in others) in views[p]
                )


def test_pico_has_no_private_view():
    table = next(random_tables(PICO, {}, seed=0))
    assert table.state.private_view(0) == "" and table.render_for(0) == table.render()


def test_pick_and_pack_shows_own_secret_tiles_and_own_full_crates():
    game = envs.get_spec("hiddenhand/pick_and_pack-v0").make_game()
    table = Table(game)
    table.reset(np.random.default_rng(0))
    table.commit(0, 0 * 6 + 2)  # red: a Rush Order (type 2) on space 0
    table.commit(1, 7 * 6 + 0)  # blue: a Premium on space 7
    red, blue = table.render_for(0), table.render_for(1)
    assert "your tiles (red, secret until both have placed; lines 0-5): top R . . . . ." in red
    assert "right . P . . . ." in blue
    assert "top R" not in blue and "right . P" not in red
    assert "your crates (red, bottom to top): [empty]" in red


# --- the terminal game -------------------------------------------------------------------
BAD_INPUTS = ("x", "99", "ILLEGAL", "")


class Player:
    """Scripted input: at some decisions the bad inputs first, then the first legal move
    listed; records everything printed and every prompt."""

    def __init__(self, num_actions: int, bad_every: int = 3) -> None:
        self.num_actions, self.bad_every = num_actions, bad_every
        self.out: list[str] = []
        self.queue: list[str] = []
        self.decisions = 0

    def print(self, *args: object) -> None:
        self.out.append(" ".join(map(str, args)))

    def legal(self) -> list[int]:
        listing = [line for line in self.out if line.startswith("your legal moves:")][-1]
        return [int(a) for a in re.findall(r"(\d+): ", listing)]

    def input(self, prompt: str) -> str:
        self.out.append(prompt)
        if not self.queue:
            legal = self.legal()
            if self.decisions % self.bad_every == 0:
                illegal = next(a for a in range(self.num_actions) if a not in legal)
                self.queue += [str(illegal) if b == "ILLEGAL" else b for b in BAD_INPUTS]
            self.queue.append(str(legal[0]))
            self.decisions += 1
        return self.queue.pop(0)

    @property
    def text(self) -> str:
        return "\n".join(self.out)


class SpyEnv(HiddenHandAEC):
    """The env, recording each ``render_for`` with the spectator's view and every seat's
    private view at that moment."""

    calls: list[tuple[str, str, list[str], str]] = []

    def render_for(self, agent: str) -> str:
        view = super().render_for(agent)
        state = self.table.state
        private = [state.private_view(p) for p in range(self.game.num_players)]
        SpyEnv.calls.append((agent, str(state), private, view))
        return view


def run_game(monkeypatch, argv: list[str], num_actions: int) -> tuple[Player, list]:
    SpyEnv.calls = []
    monkeypatch.setattr(play, "HiddenHandAEC", SpyEnv)
    player = Player(num_actions)
    assert play.main(argv, input_fn=player.input, print_fn=player.print) == 0
    return player, SpyEnv.calls


def assert_rejections(player: Player) -> None:
    """Every bad input was answered with what is allowed, and asked again."""
    text = player.text
    assert "'x' is not a number; type one of" in text
    assert "99 is not a move of this game (moves are 0-" in text
    assert re.search(r"\d+ \(.+\) is not legal now; legal: \d", text)
    assert "type the number of a move: one of" in text


def assert_finished(player: Player) -> None:
    text = player.text
    assert "--- game over ---" in text and "scores: player_0 (" in text
    assert re.search(r"\n(winner: player_\d|tie between player_\d)", text)
    assert re.search(r"\n(you win!|you share the win\.|you lose\.)$", text)


@pytest.mark.parametrize("opponent", ["random", "heuristic"])
def test_play_pico_to_the_end_rejecting_bad_input(monkeypatch, opponent):
    player, calls = run_game(
        monkeypatch, ["--env", PICO, "--opponent", opponent, "--seed", "1"], num_actions=11
    )
    assert_rejections(player)
    assert_finished(player)
    assert f"{opponent} plays every other seat" in player.text
    assert all(agent == "player_0" for agent, *_ in calls)


@pytest.mark.parametrize("seat", [0, 2])
def test_play_pickup_shows_own_hand_and_never_another(monkeypatch, seat):
    argv = ["--env", PICKUP, "--num-players", "3", "--opponent", "heuristic"]
    player, calls = run_game(monkeypatch, [*argv, "--seat", str(seat), "--seed", "5"], 10)
    assert_rejections(player)
    assert_finished(player)
    # The first view printed holds the hand dealt to the seat (the same seed deals the same).
    reference = HiddenHandAEC(envs.get_spec(PICKUP), num_players=3)
    reference.reset(seed=5)
    dealt = own_hand(reference.table.state, seat)
    assert f"your hand (player_{seat}): {dealt}" in player.text
    # Every view printed is the spectator's plus the seat's own hand, never another's.
    assert calls and all(agent == f"player_{seat}" for agent, *_ in calls)
    for _, spectator, private, view in calls:
        assert view.startswith(spectator + "\n" + private[seat])
        for q, other in enumerate(private):
            if q != seat:
                assert other not in view
    for line in player.out:
        assert not re.search(rf"your hand \(player_(?!{seat}\))", line)


def test_play_pickup_heads_a_pickup_as_a_move_and_says_what_the_order_is(monkeypatch):
    """A pickup is one player's open choice, not a reveal: it is shown under "after ...
    move", and "--- revealed ---" comes once a round (6 rounds with 3 players). The pile
    note says which card acted when: "took 4 (acted 1st)"."""
    argv = ["--env", PICKUP, "--num-players", "3", "--opponent", "random", "--seed", "3"]
    player, _ = run_game(monkeypatch, argv, 10)
    assert_finished(player)
    text = player.text
    assert 1 <= text.count("--- revealed ---") <= 6
    assert re.search(r"--- after (player_\d's|your) move ---", text)
    assert re.search(r", (took \d+|stacked it) \(acted (1st|2nd|3rd)\)", text)
    assert not re.search(r"(took \d+|stacked) \(\d\)", text)


@pytest.mark.parametrize(
    "env_id, argv",
    [
        ("hiddenhand/forslag-v0", ["--num-players", "3", "--option", "board_play=simultaneous"]),
        ("hiddenhand/easter_collection-v0", ["--option", "variant=secret_positions"]),
        ("hiddenhand/pick_and_pack-v0", ["--option", "placement=alternate"]),
    ],
)
def test_play_other_games_with_options(monkeypatch, env_id, argv):
    options = envs.get_spec(env_id).game_class.config_class.parse_options(
        [argv[i + 1] for i, a in enumerate(argv) if a == "--option"]
    )
    if "--num-players" in argv:
        options["num_players"] = int(argv[argv.index("--num-players") + 1])
    game = envs.get_spec(env_id).make_game(**options)
    player, _ = run_game(
        monkeypatch,
        ["--env", env_id, *argv, "--opponent", "random", "--seed", "2"],
        game.num_actions,
    )
    assert_finished(player)


@pytest.mark.parametrize("answer", [EOFError, KeyboardInterrupt, "q"])
def test_quitting_leaves_cleanly(answer):
    out: list[str] = []

    def input_fn(prompt: str) -> str:
        if isinstance(answer, str):
            return answer
        raise answer

    result = play.main(["--env", PICO, "--opponent", "random", "--seed", "0"], input_fn, out.append)
    assert result == 0
    assert "quitting" in out[-1] and "abandoned" in out[-1]
    assert not any("game over" in line for line in out)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--env", "nope", "--opponent", "random"], "games: hiddenhand/pico-v0"),
        (["--env", PICO, "--opponent", "nobody"], "allowed agents: 'random'"),
        (["--env", PICO, "--opponent", "random", "--seat", "2"], "seats: 0-1"),
        (["--env", PICO, "--opponent", "random", "--seat", "-1"], "seats: 0-1"),
        (["--env", PICO, "--opponent", "random", "--num-players", "5"], "allowed values: 2, 3"),
        (["--env", PICO, "--opponent", "random", "--option", "colour=red"], "allowed options:"),
        (["--env", PICO, "--opponent", "random", "--option", "points"], "key=value"),
        (["--env", PICO, "--opponent", "random", "--seed", "-3"], "non-negative"),
        (["--env", PICO, "--opponent", "runs/missing/model.zip"], "no saved model"),
        (["--env", PICO], "--opponent"),
        (["--env", PICO, "--opponent", "random", "--seat", "x"], "invalid int value"),
    ],
)
def test_bad_arguments_are_argparse_errors(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        play.main(argv, input_fn=lambda _: pytest.fail("the game must not start"))
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
