"""Deliberately broken games: each breaks one conformance claim (the kit must flag it)."""
from __future__ import annotations

import random
import zlib

import numpy as np

from arena_core.game import Position
from arena_core.spec import GameSpec
from arena_games.kuhn import KuhnAction, KuhnPoker, KuhnState
from toy_games import RepeatedPennies


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

    sample_hidden_state = KuhnPoker.__mro__[1].sample_hidden_state


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
    "no_global_rng": TouchesGlobalRandom,
    "no_private_leak": ShowsOpponentCard,
    "hidden_state_sampling": SamplerChangesOwnCard,
    "commit_reveal": PeeksAtCommitments,
    "pettingzoo_api": WrongEncodingShape,
}
