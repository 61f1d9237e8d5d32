"""docs/ecosystem.md: each integration in ten lines or fewer, and its PettingZoo and Gymnasium
snippets run as written (issue 33). Cost: about 2 s."""

import re
from pathlib import Path

import pytest

DOC = (Path(__file__).resolve().parents[1] / "docs" / "ecosystem.md").read_text()
BLOCKS = re.findall(r"^## (.+?)$|^```(\w+)\n(.*?)^```", DOC, flags=re.M | re.S)


def _blocks() -> list[tuple[str, str, str]]:
    out, section = [], ""
    for heading, lang, body in BLOCKS:
        if heading:
            section = heading
        else:
            out.append((section, lang, body))
    return out


def test_every_integration_fits_in_ten_lines():
    blocks = _blocks()
    assert {s.split()[0] for s, _, _ in blocks} >= {"PettingZoo", "Gymnasium", "Datasets", "A", "OpenSpiel's", "MCP:"}
    for section, _, body in blocks:
        assert len(body.strip().splitlines()) <= 10, section


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("section", ["PettingZoo (1.23+; registry ids 1.27+)", "Gymnasium", "OpenSpiel's tools"])
def test_the_python_snippets_run(section):
    """Every Python block of the section runs (SB3's needs the client venv: check-clients runs it)."""
    codes = [body for s, lang, body in _blocks() if s == section and lang == "python"]
    assert codes
    for code in codes:
        if "stable_baselines3" in code:
            continue
        exec(compile(code, f"docs/ecosystem.md ({section})", "exec"), {})
