"""Golden transcripts: seeded games through the text view must reproduce the checked-in files.

If a change to the rules or the text view is deliberate, regenerate with
``python -m arena_games.megagem.golden --write`` and review the diff.
"""

from __future__ import annotations

import json

import pytest

from arena_games.megagem.golden import SEEDS, generate, render, transcript_path


@pytest.mark.parametrize("seed", SEEDS)
def test_transcript_matches_the_checked_in_file(seed):
    path = transcript_path(seed)
    assert path.exists(), f"{path} is missing; generate it with: python -m arena_games.megagem.golden --write"
    want = path.read_text(encoding="utf-8").splitlines()
    got = render(generate(seed)).splitlines()
    for i, (a, b) in enumerate(zip(want, got)):
        assert a == b, (
            f"{path.name} line {i + 1} differs (regenerate on purpose: python -m arena_games.megagem.golden --write)\n"
            f"want: {a[:400]}\n got: {b[:400]}"
        )
    assert len(want) == len(got)


@pytest.mark.parametrize("seed", SEEDS)
def test_transcript_is_a_complete_game(seed):
    lines = [json.loads(x) for x in transcript_path(seed).read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "end"
    decisions = [x for x in lines if x["type"] == "decision"]
    assert 10 <= lines[-1]["rounds"] <= 22
    assert all(d["parsed"]["valid"] and not d["parsed"]["default_used"] for d in decisions)
    assert any(d["phase"] == "reveal" for d in decisions) and any("prompt" in d for d in decisions)
