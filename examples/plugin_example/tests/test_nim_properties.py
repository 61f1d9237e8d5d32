"""Nim's own invariants, written with the core's strategies and state machine.

Run them with ``pytest examples/plugin_example/tests`` once the package is installed (or with
``PYTHONPATH=examples/plugin_example/src``); run the whole conformance kit on the game with
``arena check example_nim`` or ``pytest --arena-conformance --arena-games=example_nim``.
"""

from arena_example_plugin.nim import Nim
from hypothesis import given, settings
from hypothesis.stateful import invariant

from arena_core.testing.machine import GameStateMachine
from arena_core.testing.strategies import playthroughs

NIM = Nim({"stones": 15, "max_take": 3})


@given(playthroughs(NIM))
def test_each_move_takes_exactly_its_stones(pt):
    for before, _, take, after in pt.transitions():
        assert after.state.stones == before.state.stones - take


@given(playthroughs(NIM, complete=True))
def test_whoever_takes_the_last_stone_wins(pt):
    last_seat, _ = pt.moves[-1]
    assert pt.final.state.stones == 0 and pt.returns[last_seat] == 1.0


class NimMachine(GameStateMachine):
    """Plays, clones, serialises and replays Nim with the protocol's invariants, plus this one."""

    game = NIM

    @invariant()
    def the_pile_is_never_negative(self):
        if self.position is not None:
            assert self.position.state.stones >= 0


TestNimMachine = NimMachine.TestCase
TestNimMachine.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
