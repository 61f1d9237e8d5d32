"""A player spec is parsed once, where it enters, and every consumer reads the typed value:
tournament entrant names, preflight, secrets checks and report scrubbing behave the same for
every spelling (issue 26). The source scan fails on any hand-splitting of spec text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from arena_core.errors import ConfigError, PlayerOptionsError
from arena_core.playerspec import PlayerSpec, PlayerSpecField, as_player_spec
from arena_core.registry import make_player
from arena_tournament.config import config_from_dict
from arena_tournament.identity import check_no_literal_secrets
from arena_tournament.report_games import entrant_rows
from arena_tournament.runner import check_entrants
from arena_tournament.schedule import Entrant

SRC = Path(__file__).resolve().parents[1] / "src"
URL = "http://127.0.0.1:1/v1"
KEY = "sk-proj-AbCdEf0123456789xyzXYZ"
SPELLINGS = [  # one entrant, three spellings
    f'openai{{base_url="{URL}", model="tiny"}}',
    f"openai:base_url={URL},model=tiny",
    {"name": "openai", "options": {"base_url": URL, "model": "tiny"}},
]


def _config(entrants):
    return config_from_dict({"game": "kuhn_poker", "entrants": entrants, "deals": 2})


@pytest.mark.parametrize("spelling", SPELLINGS, ids=["braces", "colon", "table"])
def test_every_spelling_gives_the_same_entrant(spelling):
    other = "random"
    config = _config([spelling, other]) if isinstance(spelling, str) else None
    entrant = config.entrants[0] if config else Entrant(name="openai", player=as_player_spec(spelling))
    assert entrant.name == "openai"  # not 'openai{base_url="http' (the short form was split on ':')
    assert entrant.player == "openai" and entrant.options == {"base_url": URL, "model": "tiny"}
    assert entrant.spec == PlayerSpec("openai", {"base_url": URL, "model": "tiny"})


def test_preflight_finds_the_player_of_a_brace_spelled_spec():
    """check_entrants looked up 'openai{model="tiny"}' as a player name and refused it."""
    config = _config(['openai{model="tiny"}', "random"])
    check_entrants(config.schedule(2))  # raises ConfigError on the old code


@pytest.mark.parametrize("spec", [f'openai{{api_key="{KEY}"}}', f"openai:api_key={KEY}"], ids=["braces", "colon"])
def test_a_literal_key_is_refused_in_every_spelling(spec):
    entrant = Entrant(name="o", player=spec)
    with pytest.raises(ConfigError, match="literal secret"):
        check_no_literal_secrets(entrant)


@pytest.mark.parametrize(
    "stored",
    [
        {"name": "o", "player": f'openai{{api_key="{KEY}", model="m"}}'},  # a results file written before parsing
        {"name": "o", "player": f"openai:api_key={KEY},model=m"},
        {"name": "o", "player": "openai", "options": {"api_key": KEY, "model": "m"}},
    ],
    ids=["braces", "colon", "parsed"],
)
def test_reports_scrub_a_key_from_every_spelling(stored):
    (row,) = entrant_rows([stored], {})
    assert KEY not in repr(row)
    assert row["player"] == "openai" and row["options"] == {"api_key": "***", "model": "m"}


def test_an_option_given_twice_is_refused():
    with pytest.raises(ValueError, match="given both"):
        Entrant(name="o", player='openai{model="a"}', options={"model": "b"})


def test_as_player_spec_reads_tables_and_refuses_others():
    assert as_player_spec({"name": "random"}) == PlayerSpec("random", {})
    for bad in (3, {"name": "random", "seed": 1}, {"options": {}}):
        with pytest.raises(ConfigError, match="not a player spec"):
            as_player_spec(bad)


def test_a_spec_table_has_one_spelling_and_the_other_is_refused_naming_it():
    """``{name, options}`` is the table; ``{player, options}`` (the loop's old spelling) is refused
    in one line that names the right key."""
    with pytest.raises(ConfigError, match=r"\{name = \.\.\., options = .*not player") as err:
        as_player_spec({"player": "random", "options": {"x": 1}})
    assert "\n" not in str(err.value)


class _Holder(BaseModel):
    spec: PlayerSpecField
    specs: list[PlayerSpecField] = []


@pytest.mark.parametrize("spelling", SPELLINGS, ids=["braces", "colon", "table"])
def test_a_spec_field_parses_every_spelling_and_writes_one_that_reads_back(spelling):
    held = _Holder(spec=spelling, specs=[spelling, "random"])
    want = PlayerSpec("openai", {"base_url": URL, "model": "tiny"})
    assert held.spec == want and held.specs == [want, PlayerSpec("random")]
    dumped = held.model_dump(mode="json")
    assert dumped["spec"] == str(want) and _Holder.model_validate(dumped) == held


def test_a_spec_field_names_the_field_of_a_bad_spec():
    with pytest.raises(ValidationError, match=r"specs\.1[\s\S]*not a player spec"):
        _Holder(spec="random", specs=["random", 3])


def test_make_player_takes_a_parsed_spec_and_refuses_an_option_given_twice():
    assert make_player(PlayerSpec("random"), seed=1).name == make_player("random", seed=1).name
    with pytest.raises(PlayerOptionsError, match="'shade' is in the spec and given again"):
        make_player(PlayerSpec("megagem_fair_value", {"shade": 0.9}), shade=0.8)


# ---------------------------------------------------------------------- the source scan
#: string methods that take spec text apart, and the separators of the spec grammar
_SPLITTERS = {"split", "rsplit", "partition", "rpartition", "find", "rfind", "index", "startswith"}
_SEPARATORS = {":", "{", ",", "="}
#: the one grammar
_ALLOWED = {SRC / "arena_core" / "playerspec.py"}


_WORDS = ("spec", "player", "entrant", "rollout", "opponent", "expert", "anchor")


def hand_splits(path: Path) -> list[str]:
    """Calls like ``<text>.partition(":")`` whose receiver, statement or enclosing function
    names a spec, a player or an entrant, outside the grammar."""
    tree = ast.parse(path.read_text())
    found = []

    def visit(node: ast.AST, function: str, statement: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            statement = ast.unparse(node) if not hasattr(node, "body") else ast.unparse(node).split("\n", 1)[0]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SPLITTERS:
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value in _SEPARATORS:
                context = f"{function} {statement}".lower()
                if any(word in context for word in _WORDS):
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        for child in ast.iter_child_nodes(node):
            visit(child, function, statement)

    visit(tree, "", "")
    return found


def test_no_module_splits_player_specs_by_hand():
    found = [hit for path in sorted(SRC.rglob("*.py")) if path not in _ALLOWED for hit in hand_splits(path)]
    assert not found, "parse specs with arena_core.playerspec (as_player_spec): " + "; ".join(found)


@pytest.mark.parametrize(
    "code",
    [
        'name = e.player.partition(":")[0]',
        'x = [v.split(":")[0] for v in entrant_specs]',
        'def _short_entrants(value):\n    return [v.split(":")[0] if ":" in v else v for v in value]',
        'if self.settings.rollout.split("{")[0] == "search": pass',
        'k = spec.find("{")',
    ],
)
def test_the_scan_catches_the_shapes_that_were_in_the_tree(code, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(code + "\n")
    assert hand_splits(path), code
