"""A player that works on any Arena game."""

from arena_core import BasePlayer, Decision


class LastLegalPlayer(BasePlayer):
    """Plays the last action of the legal set."""

    name = "example_last_legal"

    def act(self, decision: Decision):
        return decision.legal_actions[-1]
