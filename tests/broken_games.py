"""Deliberately broken games: each breaks one conformance claim (the kit must flag it)."""

from __future__ import annotations

import random
import zlib

import numpy as np

from arena_core.game import Game, Position
from arena_core.spec import GameSpec, Information, TurnStructure
from arena_games.kuhn import KuhnAction, KuhnPoker, KuhnState
from toy_games import CountToTwenty, RepeatedPennies


def _spec(**changes) -> GameSpec:
    return KuhnPoker.spec.model_copy(update=changes)


class CrashesOnLegalMove(KuhnPoker):
    def next_state(self, state, joint):
        if len(state.history) == 1:
            raise RuntimeError("rules bug")
        return super().next_state(state, joint)


class StatefulObservation(KuhnPoker):
    """Observations depend on how often the game was asked: not a function of the state."""

    calls = 0

    def observation(self, state, player):
        type(self).calls += 1
        return {**super().observation(state, player), "calls": type(self).calls}


class HashOrderedDeal(KuhnPoker):
    """The deal depends on string hashing, which PYTHONHASHSEED changes between processes."""

    def initial_state(self, rng):
        order = sorted("JQK", key=lambda c: hash(c))
        cards = tuple("JQK".index(c) for c in order[:2])
        return KuhnState(cards)


class AliasedActionIds(KuhnPoker):
    """Both actions claim index 0: the mask cannot equal the legal set."""

    def action_id(self, action):
        return 0


class IllegalIndexAccepted(KuhnPoker):
    """A third action index silently decodes to BET although the mask says it is illegal."""

    num_actions = 3

    def action_from_id(self, index):
        return KuhnAction.BET if index == 2 else KuhnAction(index)


class ActsAfterTheEnd(KuhnPoker):
    """Overrides the machinery and forgets the end-of-game check."""

    def act(self, pos, player, action):
        if self.is_terminal(pos.state):
            return Position(KuhnState(pos.state.cards, pos.state.history + (action,)), (), pos.ply + 1)
        return super().act(pos, player, action)


class ReturnsOutOfBounds(KuhnPoker):
    def returns(self, state):
        return tuple(5 * r for r in super().returns(state))


class NotZeroSum(KuhnPoker):
    def returns(self, state):
        a, b = super().returns(state)
        return (a, b + 0.5)


class TooLong(KuhnPoker):
    spec = _spec(max_length=2)


class LosesHistoryWhenSerialised(KuhnPoker):
    def state_from_json(self, data):
        state = super().state_from_json(data)
        return KuhnState(state.cards, ())


class TouchesGlobalRandom(KuhnPoker):
    def initial_state(self, rng):
        random.random()
        np.random.random()
        return super().initial_state(rng)


class ShowsOpponentCard(KuhnPoker):
    def observation(self, state, player):
        return {**super().observation(state, player), "opponent_card": state.cards[1 - player]}


class NoSampler(KuhnPoker):
    """Imperfect information but no way to resample hidden state."""

    sample_hidden_state = Game.sample_hidden_state


class DealsMyCardToTheOpponentListingNoDeals(KuhnPoker):
    """Lists no deals, and its sampler draws the opponent's card from all three: a third of its
    worlds hand the opponent the seat's own card (impossible). Every world keeps the seat's own
    observation, so a kit that needs enumerate_deals to see impossible worlds passes it."""

    def enumerate_deals(self):
        return None

    def sample_hidden_state(self, state, player, rng):
        own, other = state.cards[player], int(rng.integers(3))
        return KuhnState((own, other) if player == 0 else (other, own), state.history)


class SamplerChangesOwnCard(KuhnPoker):
    def sample_hidden_state(self, state, player, rng):
        cards = tuple(int(c) for c in rng.permutation(3)[:2])
        return KuhnState(cards, state.history)


class PeeksAtCommitments(RepeatedPennies):
    """Shows the pending commitments to everyone before the reveal."""

    def observe(self, pos, player):
        return {**super().observe(pos, player), "pending": [list(p) for p in pos.pending]}


class WrongEncodingShape(KuhnPoker):
    def encode_observation(self, state, player):
        return np.zeros(4, dtype=np.float64)


class NondeterministicReplay(KuhnPoker):
    """Action strings depend on a counter, so a recorded episode cannot be re-run to the same lines."""

    counter = 0

    def action_to_str(self, action):
        type(self).counter += 1
        return f"{action.name.lower()}#{zlib.crc32(str(type(self).counter).encode()) % 3}"


class DealsFromGlobalRandom(KuhnPoker):
    """Draws the deal from Python's global `random` module instead of the rng it is given."""

    def initial_state(self, rng):
        cards = random.sample(range(3), 2)
        return KuhnState((cards[0], cards[1]))


class DealsFromNumpyGlobal(KuhnPoker):
    """Draws the deal from numpy's global generator."""

    def initial_state(self, rng):
        deal = np.random.permutation(3)
        return KuhnState((int(deal[0]), int(deal[1])))


class MutatesInputState(KuhnPoker):
    """next_state appends to the history of the state it was given and returns that same object."""

    def next_state(self, state, joint):
        (action,) = joint.values()
        object.__setattr__(state, "history", state.history + (action,))
        return state


class MutatesAndWrongMask(MutatesInputState):
    """The mutation plus a mask that disagrees with the legal set (as in the issue's report)."""

    def legal_mask(self, state, player):
        return np.ones(self.num_actions, dtype=np.int8) if state.history else np.array([1, 0], dtype=np.int8)


class EncodesOpponentCard(KuhnPoker):
    """observe() is fine, but the numeric vector Gym/PettingZoo agents get holds the opponent's card."""

    observation_size = 12

    def encode_observation(self, state, player):
        out = np.zeros(12, dtype=np.float32)
        out[:9] = super().encode_observation(state, player)
        out[9 + state.cards[1 - player]] = 1.0
        return out


class EncodingDropsHistory(KuhnPoker):
    """The encoding keeps only the own card although the spec claims observation_is_state (the default)."""

    def encode_observation(self, state, player):
        out = np.zeros(9, dtype=np.float32)
        out[state.cards[player]] = 1.0
        return out


class EncodingBlindToOwnCard(KuhnPoker):
    """Declares observation_is_state=False (so the encoding may leave things out) and encodes the
    betting only: a numeric agent cannot tell its king from its jack (issue 42's dice-blind title)."""

    spec = _spec(observation_is_state=False)

    def encode_observation(self, state, player):
        out = super().encode_observation(state, player)
        out[:3] = 0.0
        return out


class EncodingOutOfBounds(CountToTwenty):
    observation_bounds = (0.0, 1.0)


class ClaimsNoChance(KuhnPoker):
    spec = _spec(chance=False)


class ClaimsChance(CountToTwenty):
    spec = CountToTwenty.spec.model_copy(update={"chance": True})


class ClaimsPerfectInformation(KuhnPoker):
    spec = _spec(information=Information.PERFECT)


class SimultaneousClaimsPerfect(RepeatedPennies):
    spec = RepeatedPennies.spec.model_copy(update={"information": Information.PERFECT})


class ClaimsSequential(RepeatedPennies):
    spec = RepeatedPennies.spec.model_copy(update={"turn_structure": TurnStructure.SEQUENTIAL})


class ClaimsSimultaneous(KuhnPoker):
    spec = _spec(turn_structure=TurnStructure.SIMULTANEOUS)


class ClaimsMixed(KuhnPoker):
    spec = _spec(turn_structure=TurnStructure.MIXED)


BROKEN = {
    "legal_play": CrashesOnLegalMove,
    "determinism": StatefulObservation,
    "cross_process_determinism": HashOrderedDeal,
    "mask_matches_legal": AliasedActionIds,
    "illegal_rejected": IllegalIndexAccepted,
    "no_step_after_end": ActsAfterTheEnd,
    "returns_bounds": ReturnsOutOfBounds,
    "returns_sum": NotZeroSum,
    "length_bound": TooLong,
    "serialization": LosesHistoryWhenSerialised,
    "replay": NondeterministicReplay,
    "no_global_rng": DealsFromGlobalRandom,
    "no_state_mutation": MutatesInputState,
    "no_private_leak": ShowsOpponentCard,
    "hidden_state_sampling": SamplerChangesOwnCard,
    "commit_reveal": PeeksAtCommitments,
    "chance": ClaimsNoChance,
    "turn_structure": ClaimsSequential,
    "information": ClaimsPerfectInformation,
    "encoding": EncodesOpponentCard,
    "private_encoding": EncodingBlindToOwnCard,
    "pettingzoo_api": WrongEncodingShape,
}


#: what the failure message of each check must say about its broken game (the defect, named)
NAMED = {
    "legal_play": "crashed",
    "determinism": "observations differ",
    "cross_process_determinism": "PYTHONHASHSEED",
    "mask_matches_legal": "share an index",
    "illegal_rejected": "was accepted",
    "no_step_after_end": "after the end",
    "returns_bounds": "outside the declared",
    "returns_sum": "sum to",
    "length_bound": "max_length",
    "serialization": "JSON round trip",
    "replay": "replay",
    "no_global_rng": "global RNG",
    "no_state_mutation": "next_state changed its input state",
    "no_private_leak": "observation changes",
    "hidden_state_sampling": "sampled state",
    "commit_reveal": "commitment",
    "chance": "declare chance=True",
    "turn_structure": "declared sequential",
    "information": "declare Information.IMPERFECT",
    "encoding": "carries something observe() does not show",
    "private_encoding": "what only player",
    "pettingzoo_api": "pettingzoo_api",
}

#: further broken games: (check, game class, what its failure message must say)
MORE_BROKEN = [
    ("no_global_rng", DealsFromNumpyGlobal, "plays differently when numpy's global random state is reseeded"),
    ("no_global_rng", DealsFromGlobalRandom, "plays differently when Python's global `random` is reseeded"),
    ("determinism", DealsFromGlobalRandom, "the global RNG"),
    ("no_global_rng", TouchesGlobalRandom, "global RNG"),
    ("no_state_mutation", MutatesAndWrongMask, "next_state changed its input state"),
    ("mask_matches_legal", MutatesAndWrongMask, "mask"),
    ("no_private_leak", EncodesOpponentCard, "numeric observation (encode_observation"),
    ("encoding", EncodingDropsHistory, "observation_is_state=False"),
    ("hidden_state_sampling", DealsMyCardToTheOpponentListingNoDeals, "no deal of 96 from fresh seeds"),
    ("encoding", EncodingOutOfBounds, "outside observation_bounds"),
    ("chance", ClaimsChance, "declared chance=True"),
    ("information", SimultaneousClaimsPerfect, "hidden until the reveal"),
    ("turn_structure", ClaimsSimultaneous, "declared simultaneous"),
    ("turn_structure", ClaimsMixed, "declared mixed"),
]
