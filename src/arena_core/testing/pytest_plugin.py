"""The Arena pytest plugin (a ``pytest11`` entry point of the core distribution).

``pytest --arena-conformance`` adds one test per registered game and conformance check
(``arena-conformance::<game>::<check>``): passed, failed with the defect named, or skipped as
exempt with the game's reason. ``--arena-games=a,b`` narrows the games, ``--arena-max-examples``
sets the number of hypothesis examples. Without the option the plugin adds nothing.

Fixtures (session-scoped factories): ``arena_game(game_id, params=None, num_players=None)``
makes a registered game, ``arena_playthroughs(game_or_id, **kwargs)`` gives the
:func:`~arena_core.testing.strategies.playthroughs` strategy of one.

The plugin imports only pytest and the standard library when it loads; the kit and hypothesis
are imported when a test asks for them, with the install hint if hypothesis is absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from ..errors import PluginError
    from ..game import Game
    from . import CheckResult
    from .strategies import Playthrough

HYPOTHESIS_HINT = "the Arena conformance kit and strategies need hypothesis: pip install hypothesis"
_ROOT = "arena-conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("arena", "Arena game conformance")
    group.addoption(
        "--arena-conformance",
        action="store_true",
        default=False,
        help="run the conformance kit over every registered game (one test per game and check)",
    )
    group.addoption(
        "--arena-games",
        default=None,
        metavar="IDS",
        help="with --arena-conformance: only these comma-separated game ids",
    )
    group.addoption(
        "--arena-max-examples",
        type=int,
        default=20,
        metavar="N",
        help="with --arena-conformance: hypothesis examples per game (default 20)",
    )


def _has_hypothesis() -> bool:
    try:
        import hypothesis  # noqa: F401  (only when the kit or a fixture is asked for)
    except ImportError:
        return False
    return True


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "arena_conformance: a test added by --arena-conformance")
    if config.getoption("--arena-conformance") and not _has_hypothesis():
        raise pytest.UsageError(f"--arena-conformance: {HYPOTHESIS_HINT}")


def _need_hypothesis() -> None:
    if not _has_hypothesis():
        pytest.fail(HYPOTHESIS_HINT, pytrace=False)


class _KitRun:
    """Runs the kit once per game and hands each check's result to its test item."""

    def __init__(self, max_examples: int):
        self.max_examples = max_examples
        self.results: dict[str, dict[str, Any] | PluginError] = {}

    def result(self, game_id: str, check: str) -> CheckResult:
        if game_id not in self.results:
            from ..errors import PluginError
            from ..registry import make_game
            from . import run_conformance

            try:
                game = make_game(game_id)
            except PluginError as exc:  # registered, but it cannot be loaded here (a missing extra, a broken import)
                self.results[game_id] = exc
            else:
                self.results[game_id] = {r.name: r for r in run_conformance(game, max_examples=self.max_examples)}
        found = self.results[game_id]
        if isinstance(found, Exception):
            pytest.skip(f"{game_id} is not available here: {found}")
        result: CheckResult = found[check]
        return result


class ConformanceItem(pytest.Item):
    """One conformance check of one registered game."""

    def __init__(self, *, game_id: str, check: str, kit: _KitRun, unavailable: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.game_id, self.check, self.kit, self.unavailable = game_id, check, kit, unavailable
        self.add_marker("arena_conformance")

    def runtest(self) -> None:
        if self.unavailable:
            pytest.skip(f"{self.game_id} is not available here: {self.unavailable}")
        _need_hypothesis()
        result = self.kit.result(self.game_id, self.check)
        if result.status == "exempt":
            pytest.skip(f"exempt: {result.detail}")
        if result.status == "failed":
            raise ConformanceFailure(result.detail)

    # style and the result: pytest's TracebackStyle and TerminalRepr, which live in its private package
    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ConformanceFailure):
            return f"{self.game_id} fails {self.check}: {excinfo.value}\n(reproduce with: arena check {self.game_id})"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{_ROOT}::{self.game_id}::{self.check}"


class ConformanceFailure(AssertionError):
    """A conformance check failed (its message names the defect)."""


class _GameCollector(pytest.Collector):
    def __init__(self, *, game_id: str, kit: _KitRun, unavailable: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.game_id, self.kit, self.unavailable = game_id, kit, unavailable

    def collect(self) -> Iterator[ConformanceItem]:
        from ..spec import CONFORMANCE_CHECKS

        for check in CONFORMANCE_CHECKS:
            yield ConformanceItem.from_parent(
                self, name=check, game_id=self.game_id, check=check, kit=self.kit, unavailable=self.unavailable
            )


class _KitCollector(pytest.Collector):
    def collect(self) -> Iterator[_GameCollector]:
        from ..registry import list_plugins

        config = self.config
        wanted = config.getoption("--arena-games")
        wanted = [w.strip() for w in wanted.split(",") if w.strip()] if wanted else None
        infos = {p.name: p for p in list_plugins("games")}
        unknown = sorted(set(wanted or ()) - set(infos))
        if unknown:
            raise pytest.UsageError(
                f"--arena-games: unknown game(s) {', '.join(unknown)}; `arena list games` shows them"
            )
        kit = _KitRun(config.getoption("--arena-max-examples"))
        for name in wanted or sorted(infos):
            yield _GameCollector.from_parent(self, name=name, game_id=name, kit=kit, unavailable=infos[name].reason)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[Any]) -> None:
    if not config.getoption("--arena-conformance"):
        return
    root = _KitCollector.from_parent(session, name=_ROOT)
    added: list[pytest.Item] = []
    for game in root.collect():
        added.extend(game.collect())
    items.extend(added)


@pytest.fixture(scope="session")
def arena_game() -> Callable[..., Game[Any, Any]]:
    """``arena_game(game_id, params=None, num_players=None)``: a registered game."""

    def make(game_id: str, params: dict[str, Any] | None = None, num_players: int | None = None) -> Game[Any, Any]:
        from ..registry import make_game

        return make_game(game_id, params, num_players=num_players)

    return make


@pytest.fixture(scope="session")
def arena_playthroughs(arena_game: Callable[..., Game[Any, Any]]) -> Callable[..., SearchStrategy[Playthrough]]:
    """``arena_playthroughs(game_or_id, **kwargs)``: the playthroughs strategy of a game."""

    def strategy(game: str | Game[Any, Any], **kwargs: Any) -> SearchStrategy[Playthrough]:
        _need_hypothesis()
        from .strategies import playthroughs

        return playthroughs(arena_game(game) if isinstance(game, str) else game, **kwargs)

    return strategy
