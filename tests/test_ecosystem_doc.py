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
    assert {s.split()[0] for s, _, _ in blocks} >= {"PettingZoo", "Gymnasium", "Datasets", "A"}
    for section, _, body in blocks:
        assert len(body.strip().splitlines()) <= 10, section


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("section", ["PettingZoo (1.27+)", "Gymnasium"])
def test_the_python_snippets_run(section):
    (code,) = [body for s, lang, body in _blocks() if s == section and lang == "python"]
    exec(compile(code, f"docs/ecosystem.md ({section})", "exec"), {})
