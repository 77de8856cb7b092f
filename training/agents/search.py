"""Search agents for every game, built on ``Position.resample`` and ``State.clone``.

Both agents set ``uses_position = True``: ``decide`` hands them a ``Position``, and a
determinisation drawn from it (``position.resample(rng)``, a full state the searcher's
seat cannot tell from the real one) is all they ever see of the state. A position is
the state before the current choice is revealed, so at a simultaneous choice the other
choosers' pending actions are not in it: the search draws them itself. Both agents are
deterministic given the ``rng`` passed to ``act`` (worlds, chance events and rollouts
all come from it), play the only legal action without searching, and work in every
game and player count. Two states the seat cannot tell apart get the same decision
from the same ``rng`` when the game's ``resample`` draws the same world from both (it
always draws from the same distribution).

Outcome of a finished game, for every seat: its win share (``envs.core.rewards.win_shares``:
1/k for each of k tied leaders, 0 for the others, as ``training.evaluation.tournament`` counts wins;
``outcome="win"``, the default) or its score lead (``score_leads``: its score minus the
best other score; ``outcome="lead"``; scale ISMCTS's ``exploration`` to the scores). Rollouts play every seat with the rollout policy to the end:
``"random"`` (uniform over the legal actions, the default) or ``"heuristic"`` (the
game's own ``heuristic`` agent, acting from the seat's observation and mask; several
times slower per rollout).

**PIMC** (perfect-information Monte Carlo, determinised rollouts). The budget
``samples`` is in rollouts per decision, shared among the ``k`` legal actions:
``max(1, samples // k)`` worlds are drawn, and in each world every legal action is
played once (the other seats choosing now get their actions from the rollout policy)
and rolled out to the end. Within a world all the actions share one rollout seed
(common random numbers: the same draws for the others' pending choices and the same
chance events), so they are compared on equal terms. The action with the best mean
outcome is played (ties: the lowest action). Rollouts are played on the game's batched
engine where it plays them (``batched=True``, the default: all of a decision's rollouts
at once, faster (docs/ground_truth.md); the same search with other random draws than
``batched=False``, which plays them one state at a time): random rollouts in every game
with an engine, heuristic ones where the engine has the heuristic (Pico face up,
Pickup; ``BatchedRollouts``).

**ISMCTS** (single-observer information-set MCTS, after Cowling, Powley and Whitehouse
2012 and the shape of OpenSpiel's ``ismcts.py``). One tree per decision, from the
searcher's point of view: a node is the searcher's information at a decision point,
keyed by the number of joint actions since the root, the seats choosing and the
searcher's own observation (which holds what it has seen: its hand, revealed choices,
public moves, dealt cards). Observations need not recall everything, so positions the
searcher would tell apart only by an earlier event can share a node; the statistics are
then pooled, never wrong about legality. Each iteration draws a world and descends:

- at a node, every seat choosing now picks its action from its own statistics in that
  node (decoupled UCT: a simultaneous choice is made by each chooser without the
  others' pending actions): first a legal action it has never tried there (at random),
  else the legal action maximising ``mean + exploration * sqrt(ln(n) / n_a)``, ``n``
  counting the visits of the actions legal in this world (as OpenSpiel filters
  illegal children). Only actions legal in the sampled world are ever considered.
  The other seats' statistics are keyed by the searcher's information (single
  observer): they pool every world the searcher cannot tell apart, so in the tree the
  others choose as if they knew what the searcher knows, restricted to their legal
  actions in the sampled world;
- the first node not yet in the tree is added, and the game is rolled out from there
  with the rollout policy (the root is in the tree from the start);
- every seat's outcome is backed up into the statistics of the actions it chose.

The searcher plays its most visited root action (ties: the best mean, then the lowest
action).

``action_probabilities(observation, action_mask, position=None, rng=None)``: with a
``position``, a new search (with ``rng``, default ``np.random.default_rng(0)``);
without one, the result of the last search if it was made for this observation and
mask (``act`` stores it), else a ValueError. ISMCTS returns the root visit counts
normalised; PIMC the uniform distribution over its best actions (one-hot unless tied).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from envs.core.agents import Position
from envs.core.batched import engine_class
from envs.core.game import Game, State, require_choice
from envs.core.rewards import win_shares
from envs.core.spec import spec_of

#: Default budgets (rollouts per decision): see the module docstring of each agent.
DEFAULT_SAMPLES = 200
DEFAULT_ITERATIONS = 200
#: Rollouts per decision of ``pimc_heuristic`` where they are played one state at a time
#: (each costs far more than a random one); on a batched engine it takes ``DEFAULT_SAMPLES``.
HEURISTIC_SAMPLES = 60
#: UCT exploration constant for outcomes in [0, 1] (win shares).
DEFAULT_EXPLORATION = 1.0

OUTCOMES = ("win", "lead")
ROLLOUTS = ("random", "heuristic")


def score_leads(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Every seat's score minus the best other score (along ``axis``): its lead, negative
    when behind."""
    ordered = np.sort(scores, axis=axis)
    best, second = np.take(ordered, [-1], axis=axis), np.take(ordered, [-2], axis=axis)
    return (scores - np.where(scores == best, second, best)).astype(np.float64)


def outcomes(scores: np.ndarray, kind: str) -> np.ndarray:
    """Every seat's outcome of finished games with ``scores`` (seats on the last axis):
    win share or score lead."""
    return win_shares(scores) if kind == "win" else score_leads(scores)


class RolloutPolicy:
    """Plays every seat to the end: uniformly at random or with the game's heuristic."""

    def __init__(self, game: Game, kind: str = "random") -> None:
        require_choice("rollout", kind, ROLLOUTS)
        self.game = game
        self.agent: Any = None
        if kind == "heuristic":
            self.agent = spec_of(game).agent_factory("heuristic")(game)

    def action(self, state: State, player: int, rng: np.random.Generator) -> int:
        if self.agent is None:
            return state.random_action(player, rng)
        observation = self.game.observation(state, player)
        return int(self.agent.act(observation, state.legal_mask(player).astype(np.int8), rng))

    def play_out(self, state: State, rng: np.random.Generator) -> np.ndarray:
        """Play ``state`` (changed in place) to the end; return the final scores."""
        if self.agent is None:
            return state.random_play_out(rng)
        while choosers := state.to_act():
            state.apply_legal({p: self.action(state, p, rng) for p in choosers})
        return state.scores()


class BatchedRollouts:
    """Rollouts of many determinised worlds at once, on the game's batched engine
    (``envs/<game>/batched.py``): each world is loaded into a row, and every row plays to
    the end, all rows in one step, uniformly random legal actions (``kind="random"``) or
    the engine's batched heuristic (``kind="heuristic"``: ``heuristic_actions``, the same
    choices as the game's heuristic agent, where the engine has it: Pico face up, Pickup).

    Random rows of one world share their random keys at every step (common random
    numbers: where their positions agree they choose alike); the heuristic draws its own
    numbers for every row. Chance events (reshuffles) come from the engine's generator,
    reseeded from the searcher's ``rng`` for every batch, so the results are
    deterministic given it. ``for_game`` is None when the game has no engine for this
    configuration, or none with a batched heuristic."""

    def __init__(self, game: Game, capacity: int, kind: str = "random") -> None:
        require_choice("kind", kind, ROLLOUTS)
        spec = spec_of(game)
        options = dataclasses.asdict(game.config)
        self.engine = engine_class(spec)(capacity, **options)
        self.game = game
        self.heuristic = kind == "heuristic"
        if self.heuristic and not callable(getattr(self.engine, "heuristic_actions", None)):
            raise ValueError(f"{spec.name}'s batched engine has no heuristic for {options}")
        self.engine.observed = self.heuristic  # random rollouts read no observation

    @classmethod
    def for_game(cls, game: Game, capacity: int, kind: str = "random") -> BatchedRollouts | None:
        try:
            return cls(game, capacity, kind)
        except ValueError:  # no batched engine, or one that does not play these options
            return None

    def _heuristic_actions(self, active: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The heuristic's action for every chooser of the rows ``active``: ``(k, N)``."""
        engine = self.engine
        games, seats = np.nonzero(engine.choosers()[active])
        rows = active[games]
        actions = np.zeros((len(active), self.game.num_players), dtype=np.int64)
        chosen = engine.heuristic_actions(
            engine.observe(rows, seats), engine.masks()[rows, seats], rng
        )
        actions[games, seats] = chosen
        return actions

    def play_out(
        self,
        worlds: list[State],
        rows_of_world: np.ndarray,
        forced: dict[int, np.ndarray],
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Final scores (``(k, N)``) of ``k`` rollouts: rollout ``i`` starts from
        ``worlds[rows_of_world[i]]`` with the seats in ``forced`` playing ``forced[seat][i]``
        in the first choice (every other chooser random)."""
        engine = self.engine
        k, n, size = len(rows_of_world), self.game.num_players, self.game.num_actions
        rows = np.arange(k)
        engine.rng = np.random.default_rng(rng.integers(2**63))
        engine.load([worlds[w] for w in rows_of_world], rows)
        final = np.zeros((k, n))
        active, first = rows, True
        while len(active):
            if self.heuristic:
                actions = self._heuristic_actions(active, rng)
            else:
                keys = rng.random((len(worlds), n, size))
                actions = best_legal(engine.masks()[active], keys, rows_of_world[active])
            if first:
                for seat, chosen in forced.items():
                    actions[:, seat] = chosen
                first = False
            terminated = engine.advance(actions, active)
            done = active[terminated]
            final[done] = engine.scores()[done]
            if engine.draws_after_deal:  # as ``step`` does, so later draws stay the same
                engine.redeal(done)
            active = active[~terminated]
        return final


def best_legal(masks: np.ndarray, keys: np.ndarray, world_of_row: np.ndarray) -> np.ndarray:
    """For every row and seat of ``masks`` (``(k, N, A)`` bool), the legal action with the
    largest key in its world's ``keys`` (``(worlds, N, A)``; the first of equal keys), 0
    for a seat without one: ``np.argmax(np.where(masks, keys[world_of_row], -1.0),
    axis=2)``, reading only the legal entries."""
    k, n, size = masks.shape
    actions = np.zeros(k * n, dtype=np.int64)
    legal = np.flatnonzero(masks)  # (row * N + seat) * A + action, ascending
    if not len(legal):
        return actions.reshape(k, n)
    chooser, action = np.divmod(legal, size)  # chooser: row * N + seat
    row = chooser // n
    values = keys.reshape(-1).take(legal + (world_of_row.take(row) - row) * (n * size))
    # Each chooser's legal actions are a run of ``legal``: the first best of each run.
    starts = np.flatnonzero(_run_starts(chooser))
    best = np.maximum.reduceat(values, starts)
    sizes = np.diff(starts, append=len(legal))
    hits = np.flatnonzero(values == best.repeat(sizes))
    hits = hits[_run_starts(chooser.take(hits))]
    actions[chooser.take(hits)] = action.take(hits)
    return actions.reshape(k, n)


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal ``values`` starts (True), for a non-empty array."""
    starts = np.empty(len(values), dtype=bool)
    starts[0] = True
    np.not_equal(values[1:], values[:-1], out=starts[1:])
    return starts


class _SearchAgent:
    """What both search agents share: the protocol, trivial decisions, the stored result."""

    uses_position = True

    def __init__(self, game: Game, rollout: str, outcome: str) -> None:
        require_choice("outcome", outcome, OUTCOMES)
        self.game = game
        self.outcome = outcome
        self.rollout = RolloutPolicy(game, rollout)
        self._last: tuple[bytes, bytes, np.ndarray] | None = None

    def _search(
        self, position: Position, legal: np.ndarray, rng: np.random.Generator
    ) -> tuple[int, np.ndarray]:
        """The chosen action and the distribution over ``legal`` (same order)."""
        raise NotImplementedError

    def _decide(
        self,
        observation: np.ndarray | None,
        action_mask: np.ndarray,
        rng: np.random.Generator,
        position: Position | None,
    ) -> tuple[int, np.ndarray]:
        if position is None:
            raise ValueError(
                f"{type(self).__name__} searches from a position: call it with position= "
                "(envs.core.agents.decide does)"
            )
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            action, weights = int(legal[0]), np.ones(1)
        else:
            action, weights = self._search(position, legal, rng)
        probabilities = np.zeros(len(action_mask), dtype=np.float64)
        probabilities[legal] = weights
        self._last = (_key(observation), np.asarray(action_mask).tobytes(), probabilities)
        return action, probabilities

    def act(
        self,
        observation: np.ndarray | None,
        action_mask: np.ndarray,
        rng: np.random.Generator,
        position: Position | None = None,
    ) -> int:
        return self._decide(observation, action_mask, rng, position)[0]

    def action_probabilities(
        self,
        observation: np.ndarray | None,
        action_mask: np.ndarray,
        position: Position | None = None,
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        """The search's distribution over the actions (see the module docstring)."""
        if position is not None:
            rng = np.random.default_rng(0) if rng is None else rng
            return self._decide(observation, action_mask, rng, position)[1].copy()
        last = self._last
        if last is None or last[:2] != (_key(observation), np.asarray(action_mask).tobytes()):
            raise ValueError(
                f"{type(self).__name__}.action_probabilities needs position= unless it "
                "follows act() for the same observation and mask"
            )
        return last[2].copy()


def _key(observation: np.ndarray | None) -> bytes:
    return b"" if observation is None else np.asarray(observation).tobytes()


class PIMC(_SearchAgent):
    """Determinised Monte Carlo: ``samples`` rollouts per decision, shared among the legal
    actions (at least one world; see the module docstring)."""

    def __init__(
        self,
        game: Game,
        samples: int = DEFAULT_SAMPLES,
        rollout: str = "random",
        outcome: str = "win",
        batched: bool = True,
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be at least 1, got {samples}")
        super().__init__(game, rollout, outcome)
        self.samples = samples
        #: Rollouts on the batched engine (unless ``batched=False``), where it plays them.
        self.batched = (
            BatchedRollouts.for_game(game, max(samples, game.num_actions), rollout)
            if batched
            else None
        )

    def action_values(
        self, position: Position, legal: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """Mean outcome of each action in ``legal`` for the position's seat."""
        if self.batched is not None:
            return self._batched_values(position, legal, rng)
        player = position.player
        totals = np.zeros(len(legal), dtype=np.float64)
        worlds = max(1, self.samples // len(legal))
        for _ in range(worlds):
            world = position.resample(rng)
            seed = int(rng.integers(2**63))
            for i, action in enumerate(legal):
                state = world.clone()
                draws = np.random.default_rng(seed)
                joint = {
                    p: int(action) if p == player else self.rollout.action(state, p, draws)
                    for p in state.to_act()
                }
                state.apply(joint)
                scores = self.rollout.play_out(state, draws)
                totals[i] += outcomes(scores, self.outcome)[player]
        return totals / worlds

    def _batched_values(
        self, position: Position, legal: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """``action_values`` with every rollout of the decision played at once."""
        worlds = max(1, self.samples // len(legal))
        states = [position.resample(rng) for _ in range(worlds)]
        rows_of_world = np.repeat(np.arange(worlds), len(legal))
        mine = np.tile(legal, worlds)
        scores = self.batched.play_out(states, rows_of_world, {position.player: mine}, rng)
        results = outcomes(scores, self.outcome)[:, position.player]
        return results.reshape(worlds, len(legal)).mean(axis=0)

    def _search(
        self, position: Position, legal: np.ndarray, rng: np.random.Generator
    ) -> tuple[int, np.ndarray]:
        values = self.action_values(position, legal, rng)
        best = values >= values.max() - 1e-12
        return int(legal[np.argmax(best)]), best / best.sum()


class _Node:
    """One information set of the searcher: per choosing seat, action -> [visits, total]."""

    __slots__ = ("stats",)

    def __init__(self) -> None:
        self.stats: dict[int, dict[int, list[float]]] = {}


class ISMCTS(_SearchAgent):
    """Single-observer information-set MCTS with decoupled UCT at simultaneous choices:
    ``iterations`` determinisations (one rollout each) per decision."""

    def __init__(
        self,
        game: Game,
        iterations: int = DEFAULT_ITERATIONS,
        rollout: str = "random",
        exploration: float = DEFAULT_EXPLORATION,
        outcome: str = "win",
    ) -> None:
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        super().__init__(game, rollout, outcome)
        self.iterations = iterations
        self.exploration = exploration

    def _select(self, node: _Node, player: int, legal: list[int], rng) -> int:
        """UCT for ``player`` at ``node`` among its ``legal`` actions (ascending; untried
        ones first)."""
        stats = node.stats.setdefault(player, {})
        untried = [a for a in legal if a not in stats]
        if untried:
            action = untried[int(rng.integers(len(untried)))]
            stats[action] = [0, 0.0]
            return action
        entries = [stats[a] for a in legal]
        log_total = math.log(sum([entry[0] for entry in entries]))
        exploration = self.exploration
        best, best_value = legal[0], -math.inf
        for a, (visits, total) in zip(legal, entries, strict=True):
            value = total / visits + exploration * math.sqrt(log_total / visits)
            if value > best_value:
                best, best_value = a, value
        return best

    def search_tree(self, position: Position, rng: np.random.Generator) -> dict[int, list[float]]:
        """Run the iterations; return the searcher's root statistics (action -> [visits,
        total outcome])."""
        me = position.player
        root = _Node()
        tree: dict[tuple, _Node] = {}
        for _ in range(self.iterations):
            state = position.resample(rng)
            node: _Node | None = root
            path: list[tuple[_Node, dict[int, int]]] = []
            while True:
                choosers = state.to_act()
                if not choosers:
                    scores = state.scores()
                    break
                if node is None:
                    key = (len(path), choosers, self.game.observation(state, me).tobytes())
                    node = tree.get(key)
                    if node is None:  # a new leaf: add it and roll out from here
                        tree[key] = _Node()
                        scores = self.rollout.play_out(state, rng)
                        break
                joint = {p: self._select(node, p, state.legal_actions(p), rng) for p in choosers}
                path.append((node, joint))
                state.apply_legal(joint)
                node = None
            values = outcomes(scores, self.outcome)
            for node, joint in path:
                for p, action in joint.items():
                    entry = node.stats[p][action]
                    entry[0] += 1
                    entry[1] += values[p]
        return root.stats.get(me, {})

    def _search(
        self, position: Position, legal: np.ndarray, rng: np.random.Generator
    ) -> tuple[int, np.ndarray]:
        stats = self.search_tree(position, rng)
        visits = np.array([stats.get(int(a), (0, 0.0))[0] for a in legal], dtype=np.float64)
        means = np.array(
            [stats[int(a)][1] / stats[int(a)][0] if int(a) in stats else -np.inf for a in legal]
        )
        best = int(np.lexsort((-means, -visits))[0])  # most visits, then best mean
        return int(legal[best]), visits / visits.sum()


def pimc(game: Game, samples: int = DEFAULT_SAMPLES) -> PIMC:
    """PIMC with random rollouts on the batched engine, by default with the default budget
    (the ``"pimc"`` agent; ``samples`` for a teacher with another budget)."""
    return PIMC(game, samples)


class HeuristicPIMC(PIMC):
    """PIMC that plays every seat's rollouts with the game's heuristic and values an action
    by its mean score lead (``outcome="lead"``, in points): an approximate best
    response to the heuristic, a teacher for imitation (the ``"pimc_heuristic"`` agent,
    ``--teacher pimc_heuristic``; ``--imitate-temperature`` distils its leads). In Pico
    (face up) and Pickup its rollouts are played on the batched engine, far cheaper
    than one state at a time, so its default budget there is ``DEFAULT_SAMPLES``
    rollouts a decision, elsewhere ``HEURISTIC_SAMPLES``."""

    def __init__(self, game: Game, samples: int | None = None) -> None:
        if samples is None:
            batched = BatchedRollouts.for_game(game, 1, "heuristic") is not None
            samples = DEFAULT_SAMPLES if batched else HEURISTIC_SAMPLES
        super().__init__(game, samples, rollout="heuristic", outcome="lead")


def ismcts(game: Game) -> ISMCTS:
    """ISMCTS with the default budget and random rollouts (the ``"ismcts"`` agent)."""
    return ISMCTS(game)
