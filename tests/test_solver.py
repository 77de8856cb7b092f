"""The exact two-player Pico solver, the nash agent, exact exploitability and the agents'
stated action probabilities (training.solvers.pico, training.agents.nash,
training.exploitability)."""

from __future__ import annotations

import numpy as np
import pytest

import envs.pico as pico
from envs.core.agents import RandomAgent
from envs.pico.rules import VALUES
from training.agents.nash import PicoNash
from training.evaluation.nash_conv import probabilities_of
from training.solvers.pico import (
    PicoSolver,
    Position,
    all_deals,
    best_responses,
    game_value,
    matrix_game,
    observations,
    policy_values,
    sample_deals,
)
from training.solvers.zero_sum import zero_sum_lp


def card(value: int) -> int:
    return VALUES.index(value)


def mask(*values: int) -> int:
    return sum(1 << card(v) for v in values)


@pytest.fixture(scope="module")
def game():
    return pico.SPEC.make_game(num_players=2)


def random_states(game, games: int, seed: int = 0):
    """(state, last reveal) along random games, every decision point."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        state = game.new_initial_state(np.random.default_rng(seed + g))
        reveal = None
        while not state.is_terminal():
            yield state, reveal
            joint = {p: int(rng.choice(state.legal_actions(p))) for p in state.to_act()}
            state.apply(joint)
            reveal = (joint[0], joint[1])


def late_positions(game, count: int, seed: int = 0):
    """Second-round positions of random games with at most six cards in hand."""
    found = []
    for state, reveal in random_states(game, 200, seed):
        if state.round == 1 and state.hands.sum() <= 6:
            found.append((state.clone(), reveal))
            if len(found) == count:
                break
    return found


# --- matrix games ---------------------------------------------------------------------
def test_matching_pennies_and_rock_paper_scissors():
    value, row, column = matrix_game(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    assert value == pytest.approx(0.0, abs=1e-12)
    assert row == pytest.approx([0.5, 0.5]) and column == pytest.approx([0.5, 0.5])
    rps = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    for solve in (matrix_game, zero_sum_lp):
        value, row, column = solve(rps)
        assert value == pytest.approx(0.0, abs=1e-9)
        assert row == pytest.approx([1 / 3] * 3, abs=1e-9)
        assert column == pytest.approx([1 / 3] * 3, abs=1e-9)
    assert game_value(rps.tolist()) == pytest.approx(0.0, abs=1e-9)


def test_matrix_games_agree_with_the_lp_and_their_strategies_are_optimal():
    rng = np.random.default_rng(0)
    for t in range(300):
        m, n = rng.integers(1, 6, size=2)
        matrix = rng.integers(-2, 3, (m, n)).astype(float) if t % 2 else rng.normal(size=(m, n))
        expected = zero_sum_lp(matrix)[0]
        value, row, column = matrix_game(matrix)
        assert value == pytest.approx(expected, abs=1e-8)
        assert game_value(matrix.tolist()) == pytest.approx(expected, abs=1e-8)
        assert row.min() >= 0 and column.min() >= 0
        assert row.sum() == pytest.approx(1.0) and column.sum() == pytest.approx(1.0)
        assert (row @ matrix).min() >= value - 1e-8
        assert (matrix @ column).max() <= value + 1e-8


# --- the model of the rules -----------------------------------------------------------
def test_positions_and_observations_follow_the_rules(game):
    """Position.child against the real state on random play, and the observation
    builder against the game's observations of both seats."""
    previous = None
    for state, reveal in random_states(game, 30):
        position = Position.from_state(state)
        if previous is not None and reveal is not None:
            assert previous.child(*reveal, game.points) == position
        previous = position
        for seat in range(2):
            seen = Position.from_observation(game, game.observation(state, seat))
            assert seen == (position if seat == 0 else position.swapped())
        built = observations(
            game,
            position.round,
            np.array([position.hands]),
            np.array([position.won]),
            np.array([reveal if reveal else (-1, -1)]),
            np.array([position.scores]),
        )[0]
        assert np.array_equal(built, game.observation(state, 0))
        assert np.array_equal(built[game.seat_permutations[1]], game.observation(state, 1))


def test_all_deals_and_samples():
    deals = all_deals()
    assert len(deals) == len(set(deals)) == 2772
    assert all(d0 & d1 == 0 and bin(d0).count("1") == bin(d1).count("1") == 5 for d0, d1 in deals)
    assert sample_deals(5, 1) == sample_deals(5, 1) != sample_deals(5, 2)
    assert len(set(sample_deals(100, 0))) == 100


# --- hand-solved positions ------------------------------------------------------------
def test_a_one_reveal_endgame():
    """Last round: player_0 holds 2 and 4, player_1 3 and 5; any win leaves its owner one
    card, so this is the last reveal. 2 loses to 3 and beats 5 (5 > 2 × 2), 4 beats 3 and
    loses to 5. Player_0 leads by one (points: 2, 3, 4 → 1, 5 → 2). A win for player_0 ends
    +1; player_1's 3 ties the game (0); its 5 wins it (-1). Rows (2, 4), columns (3, 5):
    [[0, 1], [1, -1]], no saddle point: value (0·-1 - 1·1) / (0 - 1 - 1 - 1) = 1/3, with
    player_0 playing 2 with probability (-1 - 1) / -3 = 2/3 and player_1 playing 3 with
    probability (-1 - 1) / -3 = 2/3."""
    position = Position(1, (mask(2, 4), mask(3, 5)), (0, 0), (1, 0))
    solver = PicoSolver("win")
    assert solver.value(position) == pytest.approx(1 / 3)
    assert solver.strategy(position, 0)[[card(2), card(4)]] == pytest.approx([2 / 3, 1 / 3])
    assert solver.strategy(position, 1)[[card(3), card(5)]] == pytest.approx([2 / 3, 1 / 3])
    assert solver.strategy(position, 0).sum() == pytest.approx(1.0)
    # Level scores: [[-1, 1], [1, -1]], matching pennies.
    level = Position(1, (mask(2, 4), mask(3, 5)), (0, 0), (3, 3))
    assert solver.value(level) == pytest.approx(0.0, abs=1e-12)
    # Score objective, level: [[-1, 1], [1, -2]]: (2 - 1) / (-1 - 2 - 1 - 1) = -0.2.
    assert PicoSolver("score").value(level) == pytest.approx(-0.2)


def test_the_solver_solves_each_reveal_as_its_solve_says():
    """``PicoSolver(solve=...)``: the same backward induction with another solution of each
    reveal's matrix game. With ``matrix_game`` it is the exact solver; with uniform play it
    values the last reveal of the worked example above as the mean of its matrix
    [[0, 1], [1, -1]], 1/4, and plays each card half the time."""
    position = Position(1, (mask(2, 4), mask(3, 5)), (0, 0), (1, 0))
    early = Position.deal(*sample_deals(1, 0)[0])
    exact, same = PicoSolver("win"), PicoSolver("win", solve=matrix_game)
    assert same.value(position) == pytest.approx(exact.value(position))
    assert same.value(early) == pytest.approx(exact.value(early))

    def uniform(matrix):
        rows, columns = matrix.shape
        return matrix.mean(), np.full(rows, 1 / rows), np.full(columns, 1 / columns)

    played = PicoSolver("win", solve=uniform)
    assert played.value(position) == pytest.approx(0.25)
    assert played.strategy(position, 1)[[card(3), card(5)]] == pytest.approx([0.5, 0.5])


def test_a_two_reveal_endgame():
    """Last round, score objective: player_0 holds 2, 4, 16, player_1 3, 5. A win for
    player_1 ends the game; a win for player_0 leaves two cards each, one more reveal.
    - 2 v 3: 3 wins, -1. 2 v 5: 2 wins (+1), then {4, 16} v {3, 5}: [[1, -2], [-1, -2]]
      (4 beats 3; 5 beats 4 and 16; 3 beats 16), player_1 plays 5: -2; in all -1.
    - 4 v 3: 4 wins (+1), then {2, 16} v {3, 5}: [[-1, 1], [-1, -2]], saddle at 2 v 3: -1;
      in all 0. 4 v 5: -2. 16 v 3: -1. 16 v 5: -2.
    First reveal [[-1, -1], [0, -2], [-1, -2]]: row 16 is dominated, and 2 v 5 is a saddle
    point: value -1."""
    position = Position(1, (mask(2, 4, 16), mask(3, 5)), (0, 0), (0, 0))
    solver = PicoSolver("score")
    rows, columns, matrix = solver.matrix(position)
    assert rows == (card(2), card(4), card(16)) and columns == (card(3), card(5))
    assert matrix == pytest.approx(np.array([[-1, -1], [0, -2], [-1, -2]]))
    assert solver.value(position) == pytest.approx(-1.0)
    assert solver.strategy(position, 1)[card(5)] == pytest.approx(1.0)
    # The win objective agrees on the signs: every line ends lost or level for player_0.
    assert PicoSolver("win").value(position) == pytest.approx(-1.0)


def test_the_score_objective_is_zero_by_symmetry_and_win_is_antisymmetric():
    """The players swap sets for the second round, so the margins cancel: with the score
    objective every deal is worth 0; with ``win``, swapping the deal negates the value."""
    win, score = PicoSolver("win"), PicoSolver("score")
    for d0, d1 in sample_deals(2, 3):
        assert score.value(Position.deal(d0, d1)) == pytest.approx(0.0, abs=1e-9)
        assert win.value(Position.deal(d0, d1)) == pytest.approx(
            -win.value(Position.deal(d1, d0)), abs=1e-9
        )


# --- agents -------------------------------------------------------------------------
def test_nash_needs_two_players():
    with pytest.raises(ValueError, match="only two-player Pico"):
        PicoNash(pico.SPEC.make_game(num_players=3))
    assert isinstance(pico.SPEC.agent_factory("nash")(pico.SPEC.make_game()), PicoNash)


@pytest.mark.parametrize("name", ["random", "heuristic", "nash", "ppo"])
def test_action_probabilities_are_the_policy_played(game, name):
    agent = pico.SPEC.agent_factory(name)(game)
    rng = np.random.default_rng(1)
    rows, masks = [], []
    for state, _ in random_states(game, 3, seed=5):
        for seat in range(2):
            observation = game.observation(state, seat)
            action_mask = state.legal_mask(seat).astype(np.int8)
            probabilities = agent.action_probabilities(observation, action_mask)
            assert probabilities.dtype == np.float64 and probabilities.shape == (11,)
            assert probabilities.sum() == pytest.approx(1.0) and probabilities.min() >= 0
            assert not probabilities[~action_mask.astype(bool)].any()
            for _ in range(3):
                assert probabilities[agent.act(observation, action_mask, rng)] > 0
            rows.append(observation)
            masks.append(action_mask)
    batch = probabilities_of(agent)(np.array(rows), np.array(masks))
    single = [agent.action_probabilities(o, m) for o, m in zip(rows, masks, strict=True)]
    assert batch == pytest.approx(np.array(single), abs=1e-6)


# --- exploitability -----------------------------------------------------------------
def brute_force(game, agent, state, objective="win"):
    """Best responses by plain recursion over the real states (player_0's payoff)."""
    solver = PicoSolver(objective)

    def value(state, best_seat):
        if state.is_terminal():
            scores = state.scores()
            return solver.payoff(int(scores[0] - scores[1]))
        other = 1 - best_seat
        sigma = agent.action_probabilities(
            game.observation(state, other), state.legal_mask(other).astype(np.int8)
        )
        results = []
        for mine in state.legal_actions(best_seat):
            total = 0.0
            for theirs in np.flatnonzero(sigma).tolist():
                child = state.clone()
                child.apply({best_seat: mine, other: theirs})
                total += sigma[theirs] * value(child, best_seat)
            results.append(total)
        return max(results) if best_seat == 0 else min(results)

    return value(state, 0), value(state, 1)


def sampling_agent(game, name: str):
    """A shipped agent that states the policy it samples (``ppo`` plays its mode by default)."""
    agent = pico.SPEC.agent_factory(name)(game)
    if name == "ppo":
        agent.deterministic = False
    return agent


@pytest.mark.parametrize("name", ["random", "heuristic", "ppo"])
def test_best_responses_match_a_plain_recursion(game, name):
    agent = sampling_agent(game, name)
    for state, reveal in late_positions(game, 3, seed=11):
        expected = brute_force(game, agent, state)
        got = best_responses(game, probabilities_of(agent), Position.from_state(state), reveal)
        assert got == pytest.approx(expected, abs=1e-6)


def test_exploitability_of_the_agents_in_late_positions(game):
    solver = PicoSolver("win")
    gaps = {}
    for name in ("random", "heuristic", "nash"):
        agent = pico.SPEC.agent_factory(name)(game)
        gaps[name] = []
        for state, reveal in late_positions(game, 6, seed=2):
            position = Position.from_state(state)
            best0, best1 = best_responses(game, probabilities_of(agent), position, reveal)
            value = solver.value(position)
            assert best0 >= value - 1e-9 and best1 <= value + 1e-9
            gaps[name].append(best0 - best1)
    assert max(gaps["nash"]) < 1e-6
    assert min(gaps["random"]) >= 0 and sum(gaps["random"]) > 0
    assert min(gaps["heuristic"]) >= 0


def on_policy(game, agent, state, memo):
    """The agent's value in both seats by plain recursion over the real states."""
    key = game.observation(state, 0).tobytes()
    if key not in memo:
        if state.is_terminal():
            scores = state.scores()
            memo[key] = float(np.sign(scores[0] - scores[1]))
        else:
            sigma = [
                agent.action_probabilities(
                    game.observation(state, p), state.legal_mask(p).astype(np.int8)
                )
                for p in (0, 1)
            ]
            matrix = joint_matrix(game, agent, state, memo)
            memo[key] = float(sigma[0] @ matrix @ sigma[1])
    return memo[key]


def joint_matrix(game, agent, state, memo):
    """The value of each pair of cards at ``state`` (11 x 11, player_0's the row)."""
    matrix = np.zeros((11, 11))
    for a in state.legal_actions(0):
        for b in state.legal_actions(1):
            child = state.clone()
            child.apply({0: a, 1: b})
            matrix[a, b] = on_policy(game, agent, child, memo)
    return matrix


def row_of(game, seen, state):
    return int(np.flatnonzero((seen == game.observation(state, 0)).all(axis=1))[0])


@pytest.mark.parametrize("name", ["random", "heuristic", "ppo"])
def test_policy_values_match_a_plain_recursion(game, name):
    agent = sampling_agent(game, name)
    for state, reveal in late_positions(game, 3, seed=5):
        seen, joint = policy_values(
            game, probabilities_of(agent), Position.from_state(state), reveal
        )
        assert len(seen) == len(joint) == len(np.unique(seen, axis=0))
        expected = joint_matrix(game, agent, state, {})
        assert joint[row_of(game, seen, state)] == pytest.approx(expected, abs=1e-6)


def test_policy_values_of_the_equilibrium_are_the_solvers_matrices_over_both_rounds(game):
    solver = PicoSolver("win")
    nash = probabilities_of(PicoNash(game))
    found = [
        (s.clone(), r)
        for s, r in random_states(game, 50, seed=3)
        if s.round == 0 and s.hands.sum() <= 4
    ][:2]
    assert found
    for state, reveal in found:
        position = Position.from_state(state)
        seen, joint = policy_values(game, nash, position, reveal)
        assert (seen[:, game.observation_layout.fields["round"].start + 1] == 1).any()
        rows, columns, matrix = solver.matrix(position)
        got = joint[row_of(game, seen, state)]
        assert got[np.ix_(rows, columns)] == pytest.approx(matrix, abs=1e-6)
    with pytest.raises(ValueError, match="game is over"):
        policy_values(game, nash, Position(2, (0, 0), (0, 0), (1, 0)))


class FirstLegal:
    """Always the lowest legal card: read and beaten wherever the position allows."""

    def act(self, observation, mask, rng=None) -> int:
        return int(np.flatnonzero(mask)[0])

    def action_probabilities(self, observation, mask) -> np.ndarray:
        probabilities = np.zeros(len(mask))
        probabilities[np.flatnonzero(mask)[0]] = 1.0
        return probabilities


def test_nash_conv_is_at_most_two_with_the_win_reward(game):
    """Each seat's best response gains at most 1 (rewards ±1), so NashConv is at most
    ``MAX_NASH_CONV`` = 2 (not 4), and a predictable agent reaches it."""
    from training.exploitability import MAX_NASH_CONV

    gaps = []
    for state, reveal in late_positions(game, 12, seed=2):
        position = Position.from_state(state)
        best0, best1 = best_responses(game, probabilities_of(FirstLegal()), position, reveal)
        gaps.append(best0 - best1)
    assert MAX_NASH_CONV == 2
    assert max(gaps) == pytest.approx(MAX_NASH_CONV) and min(gaps) >= 0


def test_exploitability_prints_its_scale(capsys, monkeypatch):
    """A NashConv comes with what it is measured against: 0 (an equilibrium), the maximum
    (2), and uniform random's figure, the one docs/ground_truth.md's table gives."""
    from pathlib import Path

    import training.exploitability as exploitability

    monkeypatch.setattr(exploitability, "nash_conv", lambda *args: np.array([1.0, 1.5]))
    exploitability.main(["--agent", "heuristic", "--deals", "2"])
    lines = capsys.readouterr().out.splitlines()
    mean, ci = exploitability.RANDOM_NASH_CONV
    assert lines[1] == (
        "scale: 0 is an equilibrium, 2 the most exploitable (a best response wins every game "
        f"from both seats); uniform random {mean:.3f} ± {ci:.3f} (200 deals, seed 0)"
    )
    docs = (Path(__file__).parent.parent / "docs" / "ground_truth.md").read_text()
    assert f"| random | {mean:.3f} ± {ci:.3f} |" in docs
    exploitability.main(["--agent", "heuristic", "--deals", "2", "--objective", "score"])
    assert "in points" in capsys.readouterr().out.splitlines()[1]


@pytest.mark.slow
def test_uniform_randoms_nash_conv_is_the_reference_printed(game):
    """``RANDOM_NASH_CONV`` is what ``--agent random --deals 200`` computes (minutes)."""
    from training.evaluation.nash_conv import nash_conv
    from training.evaluation.tournament import mean_interval
    from training.exploitability import RANDOM_DEALS, RANDOM_NASH_CONV

    values = nash_conv(game, RandomAgent(game), sample_deals(RANDOM_DEALS, 0))
    mean, ci = mean_interval(values)
    assert (round(mean, 3), round(ci, 3)) == RANDOM_NASH_CONV


@pytest.mark.slow
def test_nash_is_unexploitable_on_whole_deals(game):
    from training.evaluation.nash_conv import nash_conv

    values = nash_conv(game, PicoNash(game), sample_deals(2, 0))
    assert np.abs(values).max() < 1e-6
    assert (nash_conv(game, RandomAgent(game), sample_deals(1, 0)) > 0.1).all()


# --- command lines -------------------------------------------------------------------
def test_solve_prints_a_value_and_refuses_three_players(capsys):
    from training.solve import main

    main(["--env", "hiddenhand/pico-v0", "--seed", "3", "--objective", "score"])
    out = capsys.readouterr().out
    assert "equilibrium value for player_0 (score): 0.000000" in out
    with pytest.raises(SystemExit):
        main(["--env", "hiddenhand/pico-v0", "--num-players", "3"])
    assert "only two-player Pico" in capsys.readouterr().err
    for bad in (["--objective", "draw"], ["--env", "hiddenhand/pickup-v0"]):
        with pytest.raises(SystemExit):
            main(bad)
        assert "error" in capsys.readouterr().err


def test_exploitability_refuses_what_it_cannot_compute(capsys):
    from training.exploitability import main

    for bad in (
        ["--agent", "random", "--num-players", "3"],
        ["--agent", "random", "--env", "hiddenhand/pickup-v0"],
        ["--agent", "random", "--deals", "0"],
        ["--agent", "nobody"],
    ):
        with pytest.raises(SystemExit):
            main(bad)
        assert "error" in capsys.readouterr().err


@pytest.mark.slow
def test_exploitability_prints_json(capsys):
    import json

    from training.exploitability import main

    main(["--agent", "heuristic", "--deals", "1", "--seed", "0"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(last, parse_constant=lambda name: pytest.fail(f"{name} in {last}"))
    assert result["nash_conv"] > 0 and result["deals"] == 1 and result["objective"] == "win"
    assert result["ci"] is None  # one deal: no interval, and strict JSON


# --- search agents and the learned bound ----------------------------------------------
def test_an_observation_holds_the_whole_state(game):
    """Every hand is public: the state rebuilt from a seat's observation (that seat first)
    shows the same observation, masks and invariants, and moves on as the real one."""
    from training.solvers.pico import state_from_observation

    rng = np.random.default_rng(0)
    for seed in range(6):
        state = game.new_initial_state(np.random.default_rng(seed))
        while not state.is_terminal():
            for seat in (0, 1):
                twin = state_from_observation(game, game.observation(state, seat))
                twin.check_invariants()
                assert np.array_equal(game.observation(twin, 0), game.observation(state, seat))
                assert np.array_equal(twin.legal_mask(0), state.legal_mask(seat))
                assert np.array_equal(twin.legal_mask(1), state.legal_mask(1 - seat))
            joint = {p: int(rng.choice(np.flatnonzero(state.legal_mask(p)))) for p in (0, 1)}
            twin = state_from_observation(game, game.observation(state, 0))
            twin.apply(joint)
            state.apply(joint)
            assert np.array_equal(game.observation(twin, 0), game.observation(state, 0))


def test_search_agents_state_a_policy_that_exploitability_can_read(game):
    from training.agents.search import ISMCTS, PIMC

    solver = PicoSolver("win")
    for agent in (PIMC(game, samples=4), ISMCTS(game, iterations=4)):
        probabilities = probabilities_of(agent, game)
        for state, reveal in late_positions(game, 2, seed=5):
            position = Position.from_state(state)
            best0, best1 = best_responses(game, probabilities, position, reveal)
            value = solver.value(position)
            assert best0 >= value - 1e-9 and best1 <= value + 1e-9


def test_a_search_is_shared_by_observations_that_differ_only_in_the_last_reveal(game):
    """The searches ``probabilities_of`` shares (one per ``future_key``) give the best
    responses that a fresh search at every observation gives: the rules never read the
    last reveal. And they are shared: fewer searches than observations."""
    from envs.core.agents import Position as SeatPosition
    from training.agents.search import PIMC
    from training.solvers.pico import state_from_observation

    def fresh(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        rows = zip(observations, masks, strict=True)
        return np.array([PIMC(game, samples=8).action_probabilities(
            o, m, position=SeatPosition(state_from_observation(game, o), 0),
            rng=np.random.default_rng(0)) for o, m in rows])  # fmt: skip

    agent, searches, asked = PIMC(game, samples=8), [], []
    search = agent.action_probabilities
    agent.action_probabilities = lambda *a, **k: searches.append(1) or search(*a, **k)
    shared = probabilities_of(agent, game)
    for state, reveal in late_positions(game, 2, seed=7):
        position = Position.from_state(state)
        expected = best_responses(game, fresh, position, reveal)
        counted = lambda o, m: asked.append(len(o)) or shared(o, m)  # noqa: E731
        assert best_responses(game, counted, position, reveal) == expected
    assert 0 < len(searches) < sum(asked)


def test_a_network_is_asked_once_per_distinct_input_it_reads(game):
    """The shipped network ignores the last reveal (no first-layer weight reads it), so
    ``probabilities_of`` asks it once per position rather than after every reveal that
    leads there, and the best responses are those of asking at every observation."""
    agent = sampling_agent(game, "ppo")
    fields = game.observation_layout.fields
    ignored = {*range(fields["last_played"].start, fields["last_winners"].stop)}
    assert ignored and not ignored & set(agent.read_columns)
    asked, every = [], []
    ask = agent.action_probabilities_batch
    agent.action_probabilities_batch = lambda o, m: asked.append(len(o)) or ask(o, m)
    distinct = probabilities_of(agent)
    for state, reveal in late_positions(game, 3, seed=5):
        position = Position.from_state(state)
        expected = best_responses(
            game, lambda o, m: every.append(len(o)) or ask(o, m), position, reveal
        )
        found = best_responses(game, distinct, position, reveal)
        assert found == pytest.approx(expected, abs=1e-7)  # float32 rows, other batches
    assert 0 < sum(asked) < sum(every)


@pytest.mark.parametrize(("trainer", "model"), [("selfplay", "model.npz"), ("sb3", "model.zip")])
def test_the_learned_bound_trains_a_best_response_and_converts_its_win_rate(
    tmp_path, capsys, trainer, model
):
    import json

    from training.exploitability import main

    main(
        ["--agent", "random", "--method", "learned", "--steps", "256", "--games", "20"]
        + ["--trainer", trainer, "--out", str(tmp_path / "br")]
    )
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["method"] == "learned" and result["games"] == 20
    assert result["trainer"] == trainer
    assert result["nash_conv_bound"] == pytest.approx(4 * result["best_response_win_rate"] - 2)
    assert (tmp_path / "br" / model).is_file()
    with pytest.raises(SystemExit):  # a bound in every game, not only Pico
        main(["--env", "hiddenhand/pickup-v0", "--agent", "nobody", "--method", "learned"])


def test_a_warm_start_begins_the_best_response_from_the_agents_own_network(tmp_path, capsys):
    import json

    from training import selfplay
    from training.agents.policy import BASELINES
    from training.exploitability import main

    args = selfplay.Args(
        decisions=300, num_games=3, hidden="16", eval_every=0, eval_games=0,
        eval_pimc_games=0, eval_deals=0, progress_bar=False, out=str(tmp_path / "agent"),
    )  # fmt: skip
    agent = selfplay.train(args)
    main(
        ["--agent", str(agent), "--method", "learned", "--steps", "256", "--games", "20"]
        + ["--warm-start", "--out", str(tmp_path / "br")]
    )
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["warm_start"] is True
    config = json.loads((tmp_path / "br" / "config.json").read_text())
    assert config["init"] == str(agent) and config["hidden"] == "16"
    main(  # a shipped SB3 agent (three-player Pico's), through SB3's --init-model
        ["--agent", "ppo", "--num-players", "3", "--method", "learned", "--steps", "256"]
        + ["--games", "4", "--trainer", "sb3", "--warm-start", "--out", str(tmp_path / "sb3")]
    )
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["warm_start"] is True
    config = json.loads((tmp_path / "sb3" / "config.json").read_text())
    assert config["init_model"].endswith("pico_3p.zip") and config["net_arch"] == "128,128"
    members = json.loads((BASELINES / "pico_2p.json").read_text())["members"]
    for bad, message in (
        (["--agent", "random"], "'random' is not a saved network of the self-play learner"),
        (["--agent", str(agent), "--trainer", "sb3"], "is not one (a saved model.zip)"),
        (["--agent", "ppo", "--trainer", "sb3"], "pico_2p.npz' is not one (a saved model.zip)"),
        (["--agent", "ppo"], f"pico_2p.npz' is an average of {members} (start from one of its"),
    ):
        with pytest.raises(SystemExit):
            main([*bad, "--method", "learned", "--warm-start", "--out", str(tmp_path / "x")])
        assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_the_learners_best_response_gains_clearly_on_random_and_never_beyond_the_exact(tmp_path):
    """A lower bound must not exceed what it bounds: the learned NashConv bound of
    ``random`` (the self-play learner's best response, 40,000 decisions) stays under its
    exact NashConv (``RANDOM_NASH_CONV``, 200 deals) beyond the two intervals, and its
    win rate is clearly above one half."""
    from training.exploitability import RANDOM_NASH_CONV, learned_best_response

    result = learned_best_response(
        "hiddenhand/pico-v0", {}, "random", 40_000, 600, 0, tmp_path / "br"
    )
    assert result["best_response_win_rate"] - result["ci"] > 0.55
    exact, exact_ci = RANDOM_NASH_CONV
    assert result["nash_conv_bound"] - result["bound_ci"] <= exact + exact_ci
