"""The walk of a tournament config from the `arena` command to the results file and the report.

Two checks. No re-entry (issue 26): no module calls, by name, into a module that is still below
it on the call stack. And few returns along the static route (issue 45.5): the route is the order
in which a reader opens the definitions the run calls (each function once, at its first call by
name; consecutive calls into one module are one stop; coming back to a caller is not a stop); a
return is a stop at a module the route has already left. On the code before issue 45 the walk
made 27 stops in 12 files with 15 returns (results 6x, runner's back and forth with play through
the players' cache); now every return left is listed below with its reason. Code handed down and
run on the caller's behalf (the error funnel's command body, a generator of scheduled games) is
neither a re-entry nor a stop."""

from __future__ import annotations

import sys
import textwrap

from arena_core.cli import main

PACKAGES = ("arena_core", "arena_tournament")


def _trace(fn, args, *watchers) -> None:
    """Run ``fn(*args)`` with every watcher seeing each call and return event."""

    def profile(frame, event, arg):
        for watch in watchers:
            watch(frame, event)

    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)


def reentry_watcher(packages=PACKAGES):
    """(watcher, found): found maps (caller module, callee module) of every call by name into a
    module already on the stack to the module path that closed it."""
    found: dict[tuple[str, str], str] = {}
    stack: list[str | None] = []

    def module(frame) -> str | None:
        name = frame.f_globals.get("__name__", "")
        return name if name.startswith(packages) else None

    def watch(frame, event):
        if event == "call":
            here, below = module(frame), (stack[-1] if stack else None)
            caller = frame.f_back
            by_name = caller is not None and frame.f_code.co_name in caller.f_code.co_names
            if here is not None and below is not None and here != below and here in stack and by_name:
                path = [m for m in stack[stack.index(here) :] if m] + [here]
                found.setdefault((below, here), " -> ".join(m for i, m in enumerate(path) if not i or m != path[i - 1]))
            stack.append(here or below)
        elif event == "return" and stack:
            stack.pop()

    return watch, found


def route_watcher(packages=("arena_tournament",)):
    """(watcher, route, returns): the static route through ``packages`` (the module of each stop)
    and its returns, as (caller module, module returned to, function)."""
    seen: set[tuple[str, int]] = set()
    stack: list[str | None] = []
    route: list[str] = []
    returns: list[tuple[str, str, str]] = []

    def watch(frame, event):
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            here = name if name.startswith(packages) else None
            caller = frame.f_back
            code = frame.f_code
            first = (code.co_filename, code.co_firstlineno) not in seen
            seen.add((code.co_filename, code.co_firstlineno))
            below = next((m for m in reversed(stack) if m), None)
            by_name = caller is not None and code.co_name in caller.f_code.co_names
            entry = not route and here is not None  # where the walk starts, however it was called
            stop = here and first and (by_name or entry) and not code.co_name.startswith("<") and here != below
            if stop and (not route or route[-1] != here):
                if here in route and here not in stack:
                    returns.append((below, here, code.co_name))
                route.append(here)
            stack.append(here)
        elif event == "return" and stack:
            stack.pop()

    return watch, route, returns


def returns_during(fn, *args, packages=PACKAGES) -> dict[tuple[str, str], str]:
    watch, found = reentry_watcher(packages)
    _trace(fn, args, watch)
    return found


def route_during(fn, *args, packages=("arena_tournament",)) -> tuple[list[str], list[tuple[str, str, str]]]:
    watch, route, returns = route_watcher(packages)
    _trace(fn, args, watch)
    return route, returns


#: the returns the walk still makes, each for a reason a reader can name
ALLOWED_RETURNS = {
    # the CLI loads the config; preparing the run builds its schedule from it (a method of the config)
    ("arena_tournament.entrants", "arena_tournament.config", "schedule"),
    # a game's result and record are built where it is played, in the worker: the types and the record
    # format live with the files the store opened before the first game
    ("arena_tournament.play", "arena_tournament.results", "of"),
    ("arena_tournament.play", "arena_tournament.records", "encode_record"),
    # the run's loop writes each result as it ends, into the files it opened before the first game
    ("arena_tournament.runner", "arena_tournament.store", "write"),
    ("arena_tournament.store", "arena_tournament.records", "append"),
    # after the run, the command reads the results back to rate them, and the report the records
    ("arena_tournament.cli", "arena_tournament.results", "load_results"),
    ("arena_tournament.report_games", "arena_tournament.records", "read_game_records"),
    # the report's viewer builds the game (for the seats' views) between loading the games and laying
    # out their drill-down, both in report_games
    ("arena_tournament.report_viewer", "arena_tournament.report_games", "drilldown"),
}


def test_a_tournament_run_goes_down_without_returning(tmp_path):
    config = tmp_path / "t.toml"
    config.write_text(
        'name = "walk"\ngame = "kuhn_poker"\nentrants = ["random", "first_legal", "kuhn_king_only"]\ndeals = 2\n'
    )
    out = tmp_path / "out"
    reentries, found = reentry_watcher()
    stops, route, returns = route_watcher()
    _trace(
        main, (["tournament", str(config), "--out", str(out), "--quiet", "--backend", "sequential"],), reentries, stops
    )
    assert (out / "results.jsonl").exists() and (out / "report.html").exists()
    assert found == {}, found
    assert set(returns) <= ALLOWED_RETURNS and len(returns) == len(set(returns)), (returns, route)
    assert "arena_tournament.runner" not in {m for _, m, _ in returns}  # no back and forth with the runner
    assert len(route) <= 26, route  # 27 stops before issue 45, with the simpler report of its day


def test_the_tracer_sees_a_return_and_not_a_callback(tmp_path, monkeypatch):
    """The hostile case: a lower module that calls back up by name is counted; one that runs a
    function it was handed is not."""
    pkg = tmp_path / "walkpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "top.py").write_text(
        textwrap.dedent(
            """
            from walkpkg import low

            def run():
                low.work(helper)
                return low.callback_up()

            def helper():
                return 1

            def named():
                return 2
            """
        )
    )
    (pkg / "low.py").write_text(
        textwrap.dedent(
            """
            def work(fn):
                return fn()

            def callback_up():
                from walkpkg import top
                return top.named()
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from walkpkg import top

    found = returns_during(top.run, packages=("walkpkg",))
    assert found == {("walkpkg.low", "walkpkg.top"): "walkpkg.top -> walkpkg.low -> walkpkg.top"}


def test_the_route_counts_a_return_to_a_module_left_behind(tmp_path, monkeypatch):
    """The hostile case of the second check: ``top`` calls ``low``, then ``mid``, which calls ``low``
    again. Nothing is re-entered on the stack (the first check passes it), but the route goes
    top -> low -> mid -> low: one return, to ``low``."""
    pkg = tmp_path / "routepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "top.py").write_text("from routepkg import low, mid\n\ndef run():\n    low.one()\n    return mid.two()\n")
    (pkg / "mid.py").write_text("from routepkg import low\n\ndef two():\n    return low.three()\n")
    (pkg / "low.py").write_text("def one():\n    return 1\n\ndef three():\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from routepkg import top

    assert returns_during(top.run, packages=("routepkg",)) == {}  # the stack check sees nothing
    route, returns = route_during(top.run, packages=("routepkg",))
    assert route == ["routepkg.top", "routepkg.low", "routepkg.mid", "routepkg.low"]
    assert returns == [("routepkg.mid", "routepkg.low", "three")]
