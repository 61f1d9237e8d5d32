"""The conformance kit over every registered TextArena title, at its smallest and largest
player counts. Checks a title cannot satisfy are declared in its spec (reported 'exempt'),
never skipped here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("textarena")

from arena_core.registry import availability, list_plugins, load  # noqa: E402
from arena_core.spec import CONFORMANCE_CHECKS, Information  # noqa: E402
from arena_core.testing import assert_conformance  # noqa: E402
from arena_core.testing.checks import fingerprint  # noqa: E402

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
    if game.spec.information is Information.IMPERFECT and not game.has_hidden_state_sampler:  # declared, not skipped
        assert "sample_hidden_state" in exempt["no_private_leak"]


@pytest.mark.parametrize("name", ["textarena/LiarsDice-v0"])
def test_cross_process_determinism_sample(name):
    assert_conformance(load("games", name)(), checks=["cross_process_determinism"])


SEEDS = [0, 1]  # the kit's default cross-process seeds

_FINGERPRINT_ALL = """
import json, sys
from arena_core.registry import load
from arena_core.testing.checks import fingerprint
names, seeds = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({name: fingerprint(load("games", name)(), seeds) for name in names}))
"""


@pytest.mark.slow
def test_cross_process_determinism_every_title():
    """The kit's cross-process check over every title, batched: one fresh interpreter per string-hash
    seed fingerprints all titles (a subprocess per title and hash seed spent about 10 s each importing
    TextArena; the kit's own path is exercised above on LiarsDice)."""
    names = _titles()
    here = {name: fingerprint(load("games", name)(), SEEDS) for name in names}
    for hashseed in ("1", "4242"):
        out = subprocess.run(
            [sys.executable, "-c", _FINGERPRINT_ALL, json.dumps(names), json.dumps(SEEDS)],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONHASHSEED=hashseed),
            timeout=600,
            check=False,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        there = json.loads(out.stdout.strip().splitlines()[-1])
        differ = sorted(name for name in names if there.get(name) != here[name])
        assert not differ, f"different games with PYTHONHASHSEED={hashseed}: {differ}"
