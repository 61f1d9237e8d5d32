"""examples/textarena_play.py runs and shows what it promises."""

import runpy
from pathlib import Path

import pytest

pytest.importorskip("textarena")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "textarena_play.py"


def test_textarena_example_runs(capsys):
    module = runpy.run_path(str(EXAMPLE))
    module["main"](3)
    out = capsys.readouterr().out
    assert "LiarsDice:" in out and "end: natural" in out
    assert "player 1 accepts: accepted=True" in out and "accepted the trade offer" in out
    assert "ColonelBlotto via title_game (blotto.spec.free_text=True): 18 moves, end natural" in out
    assert "MegaGem via TextArena API:" in out and "end natural" in out
