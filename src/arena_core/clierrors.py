"""One funnel for command-line failures (:func:`guarded`): a user error is one line and exit 2, a
bug one ``internal error`` line and exit 1; argparse errors are one line too (no usage block).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from .errors import ArenaError

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1
EXIT_INTERRUPTED = 130
MAX_LINE = 600

__all__ = [
    "EXIT_INTERNAL_ERROR",
    "EXIT_USER_ERROR",
    "OneLineArgumentParser",
    "UsageError",
    "guarded",
    "is_user_error",
    "non_negative_int",
    "one_line",
    "one_line_argparse_errors",
    "policy_text",
    "positive_int",
]


class UsageError(ArenaError):
    """The command line itself is wrong (an unknown option, a value of the wrong type)."""


def _one_line_error(self: argparse.ArgumentParser, message: str) -> NoReturn:
    raise UsageError(f"{message} (see `{self.prog} --help`)")


class OneLineArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (raised as :class:`UsageError`), not usage + line."""

    error = _one_line_error


@contextlib.contextmanager
def one_line_argparse_errors() -> Iterator[None]:
    """While active, every ArgumentParser (a plugin command's too) raises :class:`UsageError`
    instead of printing its usage block and exiting."""
    saved = argparse.ArgumentParser.error
    argparse.ArgumentParser.error = _one_line_error  # type: ignore[method-assign]  # one-line errors while a command runs
    try:
        yield
    finally:
        argparse.ArgumentParser.error = saved  # type: ignore[method-assign]  # put argparse back


# ---------------------------------------------------------------------- argparse types
def _int(text: str, lowest: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < lowest:
        raise argparse.ArgumentTypeError(f"{value} is not {what}")
    return value


def non_negative_int(text: str) -> int:
    """Argparse type: an int >= 0."""
    return _int(text, 0, ">= 0")


def positive_int(text: str) -> int:
    """Argparse type: an int >= 1."""
    return _int(text, 1, ">= 1")


def policy_text(text: str) -> str:
    """Argparse type: an illegal-action policy (raise, penalize, default, retry:K, retry:K:default)."""
    from .policy import IllegalActionPolicy

    try:
        IllegalActionPolicy.parse(text)
    except (ValueError, IndexError):  # pydantic's ValidationError is a ValueError
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a policy; use raise, penalize, default, retry:K or retry:K:default (K >= 1)"
        ) from None
    return text


# ---------------------------------------------------------------------- the funnel
def one_line(text: Any) -> str:
    """``text`` squeezed onto one line of at most MAX_LINE characters."""
    parts = [" ".join(line.split()) for line in str(text).splitlines()]
    flat = " ".join(p for p in parts if p)
    return flat if len(flat) <= MAX_LINE else flat[: MAX_LINE - 1] + "…"


def is_user_error(exc: BaseException) -> bool:
    """Errors that describe bad input (arguments, configs, files), not a bug of ours."""
    from pydantic import ValidationError

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib

    # a bare ValueError is not here: it is as likely a bug as bad input; code that validates
    # input raises ArenaError (ConfigError, ...) or pydantic's ValidationError instead
    return isinstance(
        exc, (ArenaError, ValidationError, OSError, json.JSONDecodeError, UnicodeError, tomllib.TOMLDecodeError)
    )


def describe_user_error(exc: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):  # as ``invalid <title>: field: message; field: message``
        items = [
            f"{'.'.join(str(x) for x in err.get('loc', ())) or 'value'}: {err.get('msg', 'invalid')}"
            for err in exc.errors(include_url=False)
        ]
        return f"invalid {getattr(exc, 'title', '') or 'input'}: " + "; ".join(items)
    if isinstance(exc, UnicodeDecodeError):
        return f"not a UTF-8 text file ({exc.reason} at byte {exc.start})"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc) or type(exc).__name__


def debug_enabled() -> bool:
    return os.environ.get("ARENA_DEBUG", "").strip() not in ("", "0")


def guarded(prog: str, fn: Callable[..., int | None], *args: Any) -> int:
    """Run ``fn(*args)`` as the body of command ``prog``; return its exit status. User errors: one
    line on stderr, exit 2; other exceptions: one ``internal error`` line and exit 1 (``ARENA_DEBUG=1``
    re-raises them); Ctrl-C: one line, exit 130."""
    try:
        with one_line_argparse_errors():
            code = fn(*args)
        return 0 if code is None else int(code)
    except SystemExit as exc:  # --help, or a command that exits itself
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(f"{prog}: error: {one_line(exc.code)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader left (`arena list | head`): no message, and none at exit either
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_INTERNAL_ERROR
    except MemoryError:
        if debug_enabled():
            raise
        print(f"{prog}: error: out of memory (a setting too large for this machine?)", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as exc:
        if debug_enabled():
            raise
        if is_user_error(exc):
            print(f"{prog}: error: {one_line(describe_user_error(exc))}", file=sys.stderr)
            return EXIT_USER_ERROR
        print(
            f"{prog}: internal error: {type(exc).__name__}: {one_line(exc)} "
            "(a bug, not your input; run with ARENA_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL_ERROR
