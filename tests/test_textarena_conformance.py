"""The conformance kit over every registered TextArena title, at its smallest and largest
player counts. Checks a title cannot satisfy are declared in its spec (reported 'exempt'),
never skipped here."""

from __future__ import annotations

import pytest

pytest.importorskip("textarena")

from arena_core.registry import availability, list_plugins, load  # noqa: E402
from arena_core.spec import CONFORMANCE_CHECKS, Information  # noqa: E402
from arena_core.testing import assert_conformance  # noqa: E402

IN_PROCESS = [c for c in CONFORMANCE_CHECKS if c != "cross_process_determinism"]


def _titles():
    return [
        p.name for p in list_plugins("games") if p.name.startswith("textarena/") and availability("games", p.name)[0]
    ]


CASES = [
    pytest.param(name, n, id=f"{name}-{n}p")
    for name in _titles()
    for n in sorted({load("games", name).spec.min_players, load("games", name).spec.max_players})
]


@pytest.mark.parametrize("name,num_players", CASES)
def test_title_conforms(name, num_players):
    game = load("games", name)(None, num_players=num_players)
    results = assert_conformance(game, max_examples=3, checks=IN_PROCESS)
    exempt = {r.name: r.detail for r in results if r.status == "exempt"}
    assert set(exempt) == set(game.spec.exempt_checks)
    if game.spec.information is Information.IMPERFECT:  # declared, with the reason, not skipped
        assert "sample_hidden_state" in exempt["no_private_leak"]


@pytest.mark.parametrize("name", ["textarena/LiarsDice-v0"])
def test_cross_process_determinism_sample(name):
    assert_conformance(load("games", name)(), checks=["cross_process_determinism"])


@pytest.mark.slow
@pytest.mark.parametrize("name", _titles())
def test_cross_process_determinism_every_title(name):
    assert_conformance(load("games", name)(), checks=["cross_process_determinism"])
