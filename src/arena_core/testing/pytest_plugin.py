"""The Arena pytest plugin (a ``pytest11`` entry point of the core distribution): ``--arena-conformance``
adds one test per registered game and check, and two fixtures (docs/testing.md). Loading it imports
only pytest; the kit and hypothesis come when a test asks for them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

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


#: the first test of every game: loading it through its registration
REGISTRATION = "registration"


def declared_unavailable(exc: BaseException) -> bool:
    """Whether a load failure is the plugin saying it cannot work here (``PluginUnavailableError``,
    or an ``ImportError`` of its own, naming no module), not a broken plugin."""
    from ..errors import PluginUnavailableError

    if not isinstance(exc, PluginUnavailableError):
        return False
    cause = exc.__cause__
    return cause is None or (isinstance(cause, ImportError) and cause.name is None)


class _KitRun:
    """Loads each game once, runs the kit on it once, and hands each check's result to its test item."""

    def __init__(self, max_examples: int):
        self.max_examples = max_examples
        self.games: dict[str, Game[Any, Any] | tuple[str, str]] = {}  # the game, or ("skip" | "fail", why)
        self.results: dict[str, dict[str, CheckResult]] = {}

    def load(self, game_id: str) -> Game[Any, Any]:
        if game_id not in self.games:
            from ..registry import make_game

            try:
                self.games[game_id] = make_game(game_id)
            except Exception as exc:  # any failure to load a registered game is reported, none is hidden
                verdict = "skip" if declared_unavailable(exc) else "fail"
                self.games[game_id] = (verdict, f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        found = self.games[game_id]
        if isinstance(found, tuple):
            verdict, why = found
            if verdict == "skip":
                pytest.skip(f"{game_id} is not available here: {why}")
            raise RegistrationFailure(why)
        return found

    def result(self, game_id: str, check: str) -> CheckResult:
        loaded = self.games.get(game_id)
        if isinstance(loaded, tuple) and loaded[0] == "fail":
            pytest.skip(f"not run: {game_id}'s registration is broken (see {_ROOT}::{game_id}::{REGISTRATION})")
        game = self.load(game_id)
        if game_id not in self.results:
            from . import run_conformance

            self.results[game_id] = {r.name: r for r in run_conformance(game, max_examples=self.max_examples)}
        return self.results[game_id][check]


class ConformanceItem(pytest.Item):
    """One conformance check of one registered game."""

    def __init__(self, *, game_id: str, check: str, kit: _KitRun, unavailable: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.game_id, self.check, self.kit, self.unavailable = game_id, check, kit, unavailable
        self.add_marker("arena_conformance")

    def runtest(self) -> None:
        if self.unavailable:
            pytest.skip(f"{self.game_id} is not available here: {self.unavailable}")
        if self.check == REGISTRATION:
            self.kit.load(self.game_id)
            return
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
        if isinstance(excinfo.value, RegistrationFailure):
            return f"{self.game_id}: the registered game cannot be loaded: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{_ROOT}::{self.game_id}::{self.check}"


class ConformanceFailure(AssertionError):
    """A conformance check failed (its message names the defect)."""


class RegistrationFailure(AssertionError):
    """A registered game cannot be loaded (a broken registration, not a missing extra)."""


class _GameCollector(pytest.Collector):
    def __init__(self, *, game_id: str, kit: _KitRun, unavailable: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.game_id, self.kit, self.unavailable = game_id, kit, unavailable

    def collect(self) -> Iterator[ConformanceItem]:
        from ..spec import CONFORMANCE_CHECKS

        for check in (REGISTRATION, *CONFORMANCE_CHECKS):
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
    items.extend([item for game in root.collect() for item in game.collect()])


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
