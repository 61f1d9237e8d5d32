"""Unknown names say where they come from (issue 33 point 4): a name one of Arena's distributions
registers names that distribution (with its extra); a core with nothing installed says so."""

import re
import sys
from pathlib import Path

import pytest

from arena_core import registry
from arena_core.errors import UnknownGameError, UnknownPlayerError, UnknownPluginError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import dists  # noqa: E402


def _declared() -> dict[tuple[str, str], str]:
    out = {}
    for dist in dists.DISTS:
        eps = dists.entry_points(dists.project(dist))
        for kind in ("games", "players", "trainers"):
            for name, value in eps.get(f"arena.{kind}", {}).items():
                extra = re.search(r"\[([^\]]*)\]\s*$", value)
                out[kind, name] = f"turn-arena-{dist}" + (f"[{extra.group(1).strip()}]" if extra else "")
    return out


def test_the_providers_data_is_generated_from_the_distributions():
    declared = _declared()
    wrong = {k: (registry.provider(*k), v) for k, v in declared.items() if registry.provider(*k) != v}
    assert not wrong, f"run `python scripts/dists.py sync` (kind, name): (found, declared) {wrong}"
    assert dists.PROVIDERS.read_text() == dists._providers_text(), "run `python scripts/dists.py sync`"


@pytest.fixture
def nothing_installed(monkeypatch):
    monkeypatch.setattr(registry, "_index", lambda kind: {})


def test_a_known_name_says_which_distribution_to_install(nothing_installed):
    with pytest.raises(UnknownPlayerError, match=r"'random' here: it comes with turn-arena-players, which is not inst"):
        registry.plugin_info("players", "random")
    with pytest.raises(UnknownGameError, match=re.escape("pip install 'turn-arena-games[textarena]'")):
        registry.plugin_info("games", "textarena/Chess-v0")
    with pytest.raises(UnknownPluginError, match=re.escape("turn-arena-train[mlx]")):
        registry.plugin_info("trainers", "grpo")


def test_the_core_alone_says_no_games_are_installed(nothing_installed):
    with pytest.raises(UnknownGameError) as err:
        registry.plugin_info("games", "my_game")
    assert "known: )" not in str(err.value)
    assert "no games are installed; fix: pip install turn-arena-games" in str(err.value)


def test_close_names_and_the_known_list_stay():
    with pytest.raises(UnknownPlayerError, match="did you mean random"):
        registry.plugin_info("players", "rnadom")
    with pytest.raises(UnknownGameError, match=r"\(known: .*kuhn_poker"):
        registry.plugin_info("games", "zzzzzz")
