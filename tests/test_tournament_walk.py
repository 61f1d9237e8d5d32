"""The walk of a tournament config from the `arena` command to the results file goes down the
modules without returning to one it has left (issue 26): no module calls, by name, into a
module that is still below it on the call stack. Code handed down and run on the caller's
behalf (the error funnel's command body, a generator of scheduled games) is not a return."""

from __future__ import annotations

import sys
import textwrap

from arena_core.cli import main

PACKAGES = ("arena_core", "arena_tournament")


def returns_during(fn, *args, packages=PACKAGES) -> dict[tuple[str, str], str]:
    """(caller module, callee module) of every call by name into a module already on the stack,
    with the module path that closed it."""
    found: dict[tuple[str, str], str] = {}
    stack: list[str | None] = []

    def module(frame) -> str | None:
        name = frame.f_globals.get("__name__", "")
        return name if name.startswith(packages) else None

    def profile(frame, event, arg):
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

    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return found


def test_a_tournament_run_goes_down_without_returning(tmp_path):
    config = tmp_path / "t.toml"
    config.write_text(
        'name = "walk"\ngame = "kuhn_poker"\nentrants = ["random", "first_legal", "kuhn_king_only"]\ndeals = 2\n'
    )
    out = tmp_path / "out"
    found = returns_during(main, ["tournament", str(config), "--out", str(out), "--quiet", "--backend", "sequential"])
    assert (out / "results.jsonl").exists() and (out / "report.html").exists()
    assert found == {}, found


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
