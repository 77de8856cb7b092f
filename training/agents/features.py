"""Game-specific feature extractors for MaskablePPO policies (``--features game``).

An extractor passes the observation through unchanged and appends a few numbers
computed from it that a plain MLP finds hard to work out: lookups that depend on
where something is ("the tray in the grabber's row at each line") and the
heuristic's own reckonings (what a card would score, a bid's odds). It has no
weights of its own; the policy and value MLPs sit on top of it as usual. A model
trained with one keeps the extractor's import path and the game's options in its
saved file, so it loads with ``load_policy`` like any other. Shipped baselines
depend on these classes: a change to what one computes needs the baselines that
read it retrained (the tests load and play every shipped baseline).
"""

from __future__ import annotations

import gymnasium
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from envs.core.observation import ObservationLayout
from envs.core.spec import get_spec
from envs.easter_collection.heuristic import DISCARD_COST
from envs.easter_collection.rules import NUM_CARDS, NUM_POSITIONS, POINTS, SUIT_OF
from envs.forslag.rules import (
    COLOURS,
    GAME_CARD_POINTS,
    LARGEST_SET_POINTS,
    NEIGHBOUR_POINTS,
    NUM_TYPES,
    ROUND_CARD_POINTS,
    SHAPES,
)
from envs.pick_and_pack.heuristic import CRATE_FIELDS, tile_values

NO_VALUE = 99.0  # a move with nothing to gain (no tray, no tile): never legal


def extra_layout(*fields: tuple[str, int | tuple[int, ...], str]) -> ObservationLayout:
    """The named fields an extractor appends, laid end to end (their offsets by name)."""
    layout = ObservationLayout()
    for name, shape, description in fields:
        layout.add(name, shape, description, low=-NO_VALUE, high=NO_VALUE)
    return layout


#: What ``PickAndPackFeatures`` appends, per line of the observer's frame, then overall.
PICK_AND_PACK_EXTRA = (
    ("row_trays", 6, "the tray in the grabber's row at each line"),
    ("row_face_down", 6, "whether that space is face down"),
    ("line_tiles", (6, 6), "the unplayed tile types that could be activated there"),
    ("threat", 6, "the opponent's best tray along that line"),
    ("reply", 6, "the opponent's best tray, less half what it leaves the observer"),
    ("move", 6, "the heuristic's value of moving to that line"),
    ("tile_values", 6, "the heuristic's value of activating each tile type now"),
    ("mine", 4, "apples in each of the observer's crates"),
    ("theirs", 4, "the heuristic's estimate of the opponent's crates"),
)
#: What ``PickAndPackReachFeatures`` appends after those.
PICK_AND_PACK_REACH_EXTRA = (
    ("reach", (6, 6), "the trays of the grabber's column (0 elsewhere)"),
    ("ends", (2, 6), "the unplayed tile type at each end of the grabber's line"),
    ("end_values", 2, "the heuristic's value of activating each of them"),
)
#: What ``PickAndPackDecisionFeatures`` appends after those.
PICK_AND_PACK_DECISION_EXTRA = (
    ("threat_here", 1, "Rush Order: the opponent's best tray if the turn ended now"),
    ("best_move", 1, "Rush Order: the heuristic's value of the best move instead"),
    ("mixup_gain", 4, "Order Mix-up: what swapping each own crate's top tray gains"),
    ("mixup_after", 4, "Order Mix-up: each own crate's apples after the swap"),
)


class LayoutFeatures(BaseFeaturesExtractor):
    """The observation, then ``extra(fields)`` (a ``(batch, n)`` tensor) appended.

    ``options`` are the game's (the player count picks the layout); they are saved with
    the model among its policy arguments.
    """

    env_id = ""

    def __init__(
        self, observation_space: gymnasium.spaces.Box, options: dict | None = None
    ) -> None:
        game = get_spec(self.env_id).make_game(**(options or {}))
        size = game.observation_layout.size
        if size != observation_space.shape[0]:
            raise ValueError(
                f"{type(self).__name__} for {options} reads {size} values, the space has "
                f"{observation_space.shape[0]}"
            )
        self.game = game
        super().__init__(observation_space, size + self.extra_size())
        self.fields = game.observation_layout.fields

    def extra_size(self) -> int:
        raise NotImplementedError

    def forward(self, observations):
        import torch

        views = {
            name: observations[:, f.start : f.stop].reshape(-1, *f.shape)
            for name, f in self.fields.items()
        }
        return torch.cat([observations, self.extra(views)], dim=1)

    def extra(self, views: dict):
        raise NotImplementedError


class PickAndPackFeatures(LayoutFeatures):
    """Per line of the observer's frame (they move along the grabber's row, to a line):

    - the tray there in the grabber's row, and whether that space is face down;
    - which of their unplayed tile types could be activated there (an empty space);
    - the best tray the opponent could then take along that line (the grabber's row
      excluded), and the best they could take while leaving the observer the least
      on the row they move to (a second ply);
    - the heuristic's value of the move (what it gains, less half the opponent's best
      reply).

    Then the heuristic's value of activating each tile type now, the apples in each of
    the observer's crates and its estimate of the opponent's (buried trays at the mean
    when they are not shown).
    """

    env_id = "hiddenhand/pick_and_pack-v0"
    extra_fields = extra_layout(*PICK_AND_PACK_EXTRA).fields

    def extra_size(self) -> int:
        return extra_layout(*PICK_AND_PACK_EXTRA).size

    @classmethod
    def at(cls, name: str) -> slice:
        """Where ``extra`` puts one of its fields (``PICK_AND_PACK_EXTRA``)."""
        field = cls.extra_fields[name]
        return slice(field.start, field.stop)

    def extra(self, v: dict):
        import torch

        trays, face_down = v["trays"], v["face_down"]  # (B, row, line)
        row = v["grabber"].sum(dim=2)  # (B, 6): one-hot of the grabber's row
        in_row = row[:, :, None]
        row_trays = (in_row * trays).sum(dim=1)
        row_face_down = (in_row * face_down).sum(dim=1)
        empty = (row_trays == 0).float() * (1 - row_face_down)
        unplayed = v["tile_state"][:, 0, :, 0:1] * v["tile_type"][:, 0]  # (B, 12, 6)
        line_tiles = (unplayed[:, :6] + unplayed[:, 6:]).clamp(max=1) * empty[:, :, None]
        other_rows = trays - 99.0 * in_row  # the grabber's row is not the opponent's choice
        threat = other_rows.max(dim=1).values.clamp(min=0)
        top_two = trays.topk(2, dim=2).values  # best and second best tray of each row
        best_elsewhere = torch.where(
            trays >= top_two[:, :, :1], top_two[:, :, 1:], top_two[:, :, :1]
        )
        reply = (other_rows - 0.5 * best_elsewhere).max(dim=1).values.clamp(min=-3)
        tiles, mine, theirs = self.tile_values(v)
        on_tiles = line_tiles * tiles[:, None, :] - NO_VALUE * (1 - line_tiles)
        gain = torch.where(
            row_trays > 0, row_trays, on_tiles.max(dim=2).values.clamp(min=-NO_VALUE)
        )
        move = gain - 0.5 * threat
        return torch.cat(
            [
                row_trays,
                row_face_down,
                line_tiles.flatten(1),
                threat,
                reply,
                move,
                tiles,
                mine,
                theirs,
            ],
            dim=1,
        )

    @staticmethod
    def tile_values(v: dict):
        """``envs.pick_and_pack.heuristic.tile_values`` (the heuristic's own reckoning) of
        the batch, as tensors: each tile type's value, my crates' apples and its estimate
        of the opponent's."""
        import torch

        batch = {key: v[key].numpy() for key in CRATE_FIELDS}
        return tuple(torch.as_tensor(a, dtype=torch.float32) for a in tile_values(batch))


class ForslagFeatures(LayoutFeatures):
    """Per card type, what playing it now to the observer's board would score (the same
    numbers serve a draft): its Game Card, Round Card and right-hand neighbour points
    (0 where there is no such card yet), the change of the Largest Set points, and their
    sum."""

    env_id = "hiddenhand/forslag-v0"

    def __init__(
        self, observation_space: gymnasium.spaces.Box, options: dict | None = None
    ) -> None:
        import torch

        super().__init__(observation_space, options)
        types = torch.arange(NUM_TYPES)
        colour = torch.nn.functional.one_hot(types // len(SHAPES), len(COLOURS))
        shape = torch.nn.functional.one_hot(types % len(SHAPES), len(SHAPES))
        self.register_buffer("attributes", torch.cat([colour, shape], dim=1).float())  # (25, 10)

    def extra_size(self) -> int:
        return 5 * NUM_TYPES

    def points(self, card):
        """Per type, the match points against ``card`` (B, 10): 1 for a colour or a shape,
        2 for both, 0 for no card."""
        colour = card[:, : len(COLOURS)] @ self.attributes[:, : len(COLOURS)].T
        shape = card[:, len(COLOURS) :] @ self.attributes[:, len(COLOURS) :].T
        return colour + shape

    def extra(self, v: dict):
        import torch

        this_round = v["round"]  # (B, N) one-hot
        round_card = (this_round[:, :, None] * v["round_cards"]).sum(dim=1)
        right_card = (this_round[:, :, None] * v["boards"][:, -1]).sum(dim=1)
        game = GAME_CARD_POINTS * self.points(v["game_card"])
        by_round = ROUND_CARD_POINTS * self.points(round_card)
        neighbour = NEIGHBOUR_POINTS * self.points(right_card)
        counts = v["boards"][:, 0].sum(dim=1)  # (B, 10) attribute counts of the own board
        after = (counts[:, None, :] + self.attributes[None]).max(dim=2).values
        largest = LARGEST_SET_POINTS * (after - counts.max(dim=1, keepdim=True).values)
        total = game + by_round + neighbour + largest
        return torch.cat([game, by_round, neighbour, largest, total], dim=1)


class EasterCollectionFeatures(LayoutFeatures):
    """Per table position and card, as the heuristic reckons a bid of the card there: the
    unseen cards of the suit that would beat it, and the bid's expected points (both 0
    where the suits differ); then per card the best of those values (a discard's small
    cost where no table card has its suit)."""

    env_id = "hiddenhand/easter_collection-v0"

    def __init__(
        self, observation_space: gymnasium.spaces.Box, options: dict | None = None
    ) -> None:
        import torch

        super().__init__(observation_space, options)
        suit = torch.tensor(SUIT_OF)
        strength = torch.tensor(self.game.bid_strength, dtype=torch.float32)  # [table][bid]
        same_suit = (suit[:, None] == suit[None, :]).float()
        # beats[t, c, u]: bid u beats bid c on table card t (all three of one suit).
        beats = (strength[:, None, :] > strength[:, :, None]).float()
        beats *= same_suit[:, :, None] * same_suit[:, None, :]
        self.register_buffer("beats", beats, persistent=False)
        self.register_buffer("same_suit", same_suit, persistent=False)
        self.register_buffer("points", torch.tensor(POINTS, dtype=torch.float32), persistent=False)

    def extra_size(self) -> int:
        return 2 * NUM_POSITIONS * NUM_CARDS + NUM_CARDS

    def extra(self, v: dict):
        import torch

        table, unseen = v["table"], v["unseen"]  # (B, 4, 52), (B, 52)
        present = table.sum(dim=2)  # (B, 4)
        card = table.argmax(dim=2)  # (B, 4): each table card (0 where none; masked below)
        suits = self.same_suit[card]  # (B, 4, 52): the cards of each table card's suit
        matches = present[:, :, None] * suits
        threats = (self.beats[card] @ unseen[:, None, :, None]).squeeze(-1) * matches
        # Table cards of each one's suit, itself included.
        table_suits = suits.gather(2, card[:, None, :].expand(-1, NUM_POSITIONS, -1))
        of_suit = (table_suits * present[:, None, :]).sum(dim=2).clamp(min=1)
        unseen_total = unseen.sum(dim=1).clamp(min=1)
        per_opponent = threats / unseen_total[:, None, None] / of_suit[:, :, None]
        p_win = (1 - per_opponent) ** (self.game.num_players - 1)
        gain = self.points[card][:, :, None] + self.points
        value = (p_win * gain - (1 - p_win) * self.points) * matches
        best = value.masked_fill(matches == 0, -1e9).max(dim=1).values
        discard = -DISCARD_COST * self.points.expand_as(best)
        best = torch.where(matches.any(dim=1), best, discard)
        return torch.cat([threats.flatten(1), value.flatten(1), best], dim=1)


class PickAndPackReachFeatures(PickAndPackFeatures):
    """``PickAndPackFeatures``, then what the grabber's own cell reaches, read off by
    position so the policy need not: the trays of the grabber's column (the opponent's
    next line, so the trays a Malfunction would deny them; in grid order, 0 elsewhere),
    and for each end of the grabber's line the type of the unplayed tile there (one-hot)
    and the heuristic's value of activating it (0 without one)."""

    def extra_size(self) -> int:
        return extra_layout(*PICK_AND_PACK_EXTRA, *PICK_AND_PACK_REACH_EXTRA).size

    def extra(self, v: dict):
        import torch

        base = super().extra(v)
        tiles = base[:, self.at("tile_values")]
        column = v["grabber"].sum(dim=1)  # (B, 6): one-hot of the grabber's column
        reach = v["trays"] * column[:, None, :]
        unplayed = v["tile_state"][:, 0, :, 0:1] * v["tile_type"][:, 0]  # (B, 12, 6)
        ends = (unplayed.reshape(-1, 2, 6, 6) * column[:, None, :, None]).sum(dim=2)  # (B, 2, 6)
        end_values = (ends * tiles[:, None, :]).sum(dim=2)
        return torch.cat([base, reach.flatten(1), ends.flatten(1), end_values], dim=1)


class PickAndPackDecisionFeatures(PickAndPackReachFeatures):
    """``PickAndPackReachFeatures``, then the numbers two sub-decisions turn on, gathered
    by position so the policy need not:

    - using a Rush Order: the best tray the opponent could take if the turn ended now
      (on the grabber's column) and the heuristic's value of the best move to make
      instead (``NO_VALUE`` below zero without one);
    - the own side of an Order Mix-up (zeros otherwise): for each of the observer's
      crates, what swapping its top tray for the chosen opponent tray gains, and the
      crate's apples after the swap (zeros where the crate cannot swap: closed or
      empty).
    """

    def extra_size(self) -> int:
        fields = (*PICK_AND_PACK_EXTRA, *PICK_AND_PACK_REACH_EXTRA, *PICK_AND_PACK_DECISION_EXTRA)
        return extra_layout(*fields).size

    def extra(self, v: dict):
        import torch

        base = super().extra(v)
        column = v["grabber"].sum(dim=1)  # (B, 6): one-hot of the grabber's column
        threat_here = (base[:, self.at("threat")] * column).sum(dim=1, keepdim=True)
        best_move = (base[:, self.at("move")] - 2 * NO_VALUE * column).max(dim=1, keepdim=True)
        best_move = best_move.values.clamp(min=-NO_VALUE)
        top, count = v["crate_top"], v["crate_count"]
        swappable = (v["crate_closure"][:, 0].sum(dim=2) == 0) & (count[:, 0] > 0)
        swappable = swappable.float() * v["mixup_crate"].sum(dim=1, keepdim=True)
        chosen = (v["mixup_crate"] * top[:, 1]).sum(dim=1, keepdim=True)
        gain = (chosen - top[:, 0]) * swappable
        after = (v["crate_stack"][:, 0].sum(dim=2) + gain) * swappable
        return torch.cat([base, threat_here, best_move, gain, after], dim=1)
