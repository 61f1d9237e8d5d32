"""Position is a frozen value: fields by name, defaults, equality and hash by fields, no
mutation, and pickling, copying and ``dataclasses.replace`` keep it equal."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_core.game import Position

states = st.one_of(st.integers(), st.text(max_size=5), st.tuples(st.integers(), st.integers()))
pendings = st.lists(st.tuples(st.integers(0, 5), st.integers()), max_size=3).map(tuple)


@given(state=states, pending=pendings, ply=st.integers(0, 10**6), other_ply=st.integers(0, 10**6))
def test_position_is_a_frozen_value(state, pending, ply, other_ply):
    pos = Position(state, pending, ply)
    assert (pos.state, pos.pending, pos.ply) == (state, pending, ply)
    twin = Position(state=state, pending=pending, ply=ply)
    assert pos == twin and hash(pos) == hash(twin)
    assert (Position(state, pending, other_ply) == pos) == (other_ply == ply)
    assert pickle.loads(pickle.dumps(pos)) == pos and copy.deepcopy(pos) == pos
    assert dataclasses.replace(pos, ply=other_ply) == Position(state, pending, other_ply)
    assert pos.committed() == frozenset(p for p, _ in pending)
    for name in ("state", "pending", "ply"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(pos, name, None)


def test_position_defaults_and_slots():
    pos = Position("s")
    assert pos.pending == () and pos.ply == 0 and repr(pos) == "Position(state='s', pending=(), ply=0)"
    assert not hasattr(pos, "__dict__")
    with pytest.raises(TypeError):
        Position()  # type: ignore[call-arg]
