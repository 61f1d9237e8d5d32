"""Player specs: a registered player name plus options, written on one command line: ``random``,
``openai{model="tiny"}`` (a TOML inline table), ``--player openai model=tiny`` (words) or the older
``name:key=value,...`` (README, "Player specs"). A spec is parsed once, where it enters, into the
typed :class:`PlayerSpec`; a malformed one raises :class:`~arena_core.errors.ConfigError` in one line.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPE = {'"': '\\"', "\\": "\\\\"}
EXAMPLE = 'openai{base_url="http://127.0.0.1:8080/v1", model="tiny"}'


@dataclass(frozen=True)
class PlayerSpec:
    """A registered player name and the keyword options its factory gets."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        """The inline-table spelling, which :func:`parse_player_spec` reads back to an equal spec."""
        if not self.options:
            return self.name
        return self.name + "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in self.options.items()) + "}"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)  # a JSON number is a TOML one (finite floats)
    if isinstance(value, str):
        return (
            '"'
            + "".join(_ESCAPE.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in value)
            + '"'
        )
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise ConfigError(f"player option value {value!r} cannot be written in a player spec")


def _no_dates(value: Any) -> Any:
    """TOML reads ``2024-01-01`` as a date; options stay JSON-like, so those stay strings."""
    if isinstance(value, (_dt.date, _dt.time)):
        return None
    if isinstance(value, list):
        return [_no_dates(v) for v in value]
    if isinstance(value, dict):
        return {k: _no_dates(v) for k, v in value.items()}
    return value


def parse_value(text: str) -> Any:
    """One option value: a TOML scalar or array when it reads as one, else the text itself."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    if isinstance(value, (_dt.date, _dt.time)) or (isinstance(value, (list, dict)) and _no_dates(value) != value):
        return text
    return value


def _check_name(name: str, text: str) -> str:
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"player spec {text!r}: {name!r} is not a player name; write NAME or NAME{{key=value, ...}}, e.g. {EXAMPLE}"
        )
    return name


def _check_key(key: str, text: str) -> str:
    if not _KEY.fullmatch(key):
        raise ConfigError(f"player spec {text!r}: option name {key!r} must be a Python identifier")
    return key


def parse_player_spec(text: str) -> PlayerSpec:
    """One seat from ``name``, ``name{k = v, ...}`` (TOML inline table) or ``name:k=v,k=v``."""
    s = text.strip()
    if not s:
        raise ConfigError(f"empty player spec; write NAME or NAME{{key=value, ...}}, e.g. {EXAMPLE}")
    brace = s.find("{")
    colon = s.find(":")
    if brace != -1 and (colon == -1 or brace < colon):
        name = _check_name(s[:brace].strip(), text)
        if not s.endswith("}"):
            raise ConfigError(f"player spec {text!r}: the options must end with '}}', e.g. {EXAMPLE}")
        try:
            options = tomllib.loads(f"v = {s[brace:]}")["v"]
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(
                f"player spec {text!r}: the options are not a TOML inline table ({exc}); "
                f"write key = value pairs with strings in double quotes, e.g. {EXAMPLE}"
            ) from None
        if _no_dates(options) != options:
            raise ConfigError(f"player spec {text!r}: dates and times are not player options; quote them as strings")
        return PlayerSpec(name, {_check_key(k, text): v for k, v in options.items()})
    if colon != -1:
        name = _check_name(s[:colon].strip(), text)
        options = {}
        for item in filter(None, (i.strip() for i in s[colon + 1 :].split(","))):
            key, eq, value = item.partition("=")
            if not eq:
                raise ConfigError(f"player spec {text!r}: option {item!r} must look like key=value")
            options[_check_key(key.strip(), text)] = parse_value(value.strip())
        return PlayerSpec(name, options)
    return PlayerSpec(_check_name(s, text), {})


def parse_player_words(words: Sequence[str]) -> PlayerSpec:
    """One seat from ``["NAME", "key=value", ...]`` (what one ``--player`` option collects); the first
    word may be any :func:`parse_player_spec` spelling, later words add to (and override) its options."""
    if not words:
        raise ConfigError(
            "--player needs a player name, e.g. --player openai base_url=http://127.0.0.1:8080/v1 model=tiny"
        )
    spec = parse_player_spec(words[0])
    options = dict(spec.options)
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq:
            raise ConfigError(f"--player {' '.join(words)}: {word!r} must look like key=value (one option per word)")
        options[_check_key(key.strip(), word)] = parse_value(value)
    return PlayerSpec(spec.name, options)


def split_seats(text: str) -> list[str]:
    """Split a ``--players`` string on commas that are outside braces, brackets and quotes."""
    seats, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth < 0:
                raise ConfigError(f"--players {text!r}: unbalanced '{ch}'")
        elif ch == "," and depth == 0:
            seats.append(text[start:i])
            start = i + 1
        i += 1
    if quote or depth:
        raise ConfigError(f"--players {text!r}: unclosed {'quote' if quote else 'brace'}")
    seats.append(text[start:])
    stripped = [s.strip() for s in seats]
    if not all(stripped):
        empty = [i for i, s in enumerate(stripped) if not s]
        raise ConfigError(
            f"--players {text!r}: seat {', '.join(str(i) for i in empty)} is empty (two commas, or one at an end); "
            "name one player per seat"
        )
    return stripped


def parse_player_list(text: str) -> list[PlayerSpec]:
    """The seats of a ``--players a,b`` string (seats may be inline tables)."""
    seats = split_seats(text)
    for seat in seats:  # `name:k=v,k=v` splits into seats here; say how to write several options
        if "=" in seat and not re.match(r"\s*[A-Za-z0-9_.\-/]+\s*[{:]", seat):
            raise ConfigError(
                f"--players {text!r}: seat {seat!r} names no player; a player with several options needs braces, e.g. {EXAMPLE}"
            )
    return [parse_player_spec(s) for s in seats]


def add_player_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Give an argparse (sub)parser ``--players a,b`` and repeatable ``--player NAME key=value ...``."""
    parser.add_argument(
        "--players",
        default=None,
        help=f"comma-separated player specs, one per seat: NAME or NAME{{key=value, ...}} (e.g. '{EXAMPLE},random')",
    )
    parser.add_argument(
        "--player",
        action="append",
        nargs="+",
        default=[],
        metavar="NAME_OR_OPTION",
        help="one seat, repeatable, in seat order: --player NAME key=value ... (values are TOML scalars or plain strings)",
    )
    parser.set_defaults(_players_required=required)


def players_from_args(args: argparse.Namespace) -> list[PlayerSpec]:
    """The seats given by :func:`add_player_arguments`' options (``--players`` seats first)."""
    specs = parse_player_list(args.players) if args.players else []
    specs += [parse_player_words(words) for words in args.player]
    if not specs and getattr(args, "_players_required", True):
        raise ConfigError("no players given; use --players a,b or --player NAME key=value ... once per seat")
    return specs


def as_player_spec(value: PlayerSpec | str | Mapping[str, Any]) -> PlayerSpec:
    """The typed spec of a value read from a config: a :class:`PlayerSpec`, any string spelling,
    or a table ``{name = "...", options = {...}}``. The one place a config's spec is parsed."""
    if isinstance(value, PlayerSpec):
        return value
    if isinstance(value, str):
        return parse_player_spec(value)
    if isinstance(value, Mapping) and "player" in value and "name" not in value:
        raise ConfigError(f"player spec {dict(value)!r}: write the table {{name = ..., options = {{...}}}}, not player")
    if isinstance(value, Mapping) and isinstance(value.get("name"), str) and set(value) <= {"name", "options"}:
        options = value.get("options") or {}
        if not isinstance(options, Mapping):
            raise ConfigError(f"player spec {dict(value)!r}: options must be a table of key = value")
        return PlayerSpec(_check_name(value["name"], str(value["name"])), dict(options))
    raise ConfigError(f"{value!r} is not a player spec; write NAME or NAME{{key=value, ...}}, e.g. {EXAMPLE}")


def _validated(value: Any) -> PlayerSpec:
    try:
        return as_player_spec(value)
    except ConfigError as exc:  # pydantic reports a ValueError with the field's place
        raise ValueError(str(exc)) from None


#: a pydantic config field holding a :class:`PlayerSpec`: any spelling is parsed on validation, and
#: it is written back as ``str(spec)``, which parses to an equal spec
PlayerSpecField = Annotated[PlayerSpec, BeforeValidator(_validated), PlainSerializer(str, return_type=str)]
