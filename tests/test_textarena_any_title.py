"""Any TextArena env id as an arena game (``title_game``): titles outside the table and
variants of registered ones play as free text with the adapter's guarantees; registered ids
give their exact classes; bad input gets an error that names the fix."""

from __future__ import annotations

import pickle
import random

import pytest

pytest.importorskip("textarena")

from arena_core import play_episode  # noqa: E402
from arena_core.errors import ConfigError, PluginUnavailableError, UnknownGameError  # noqa: E402
from arena_core.registry import load, make_player  # noqa: E402
from arena_core.spec import CONFORMANCE_CHECKS  # noqa: E402
from arena_core.testing import assert_conformance  # noqa: E402
from arena_games.textarena import title_game  # noqa: E402
from arena_games.textarena.adapter import EndKind  # noqa: E402

#: every split of 20 units over fields A, B, C in steps of 4: ColonelBlotto accepts each of them
BLOTTO = tuple(f"[A{a} B{b} C{20 - a - b}]" for a in range(0, 21, 4) for b in range(0, 21 - a, 4))
MAFIA = tuple(f"[{k}]" for k in range(6)) + ("I think we should vote carefully.",)


def _play(game, seed):
    players = [make_player("random", seed=100 + i) for i in range(game.num_players)]
    return play_episode(game, players, seed=seed)


@pytest.mark.parametrize(
    "env_id,num_players,options",
    [
        ("ColonelBlotto-v0", 2, dict(vocabulary=BLOTTO, decision_cap=40)),  # a title outside the table
        ("SecretMafia-v0", 6, dict(players=(5, 6), vocabulary=MAFIA, decision_cap=80)),  # six players
        (
            "KuhnPoker-v0-short",
            2,
            dict(vocabulary=("[check]", "[bet]", "[call]", "[fold]"), decision_cap=20),
        ),  # a variant
    ],
)
def test_any_env_id_plays_to_the_end_deterministically_without_touching_random(env_id, num_players, options):
    cls = title_game(env_id, **options)
    assert cls.spec.free_text and cls.spec.id == f"textarena/{env_id}"
    before = random.getstate()
    for seed in range(3):
        first, again = _play(cls(num_players=num_players), seed), _play(cls(num_players=num_players), seed)
        assert first.end is not None and first.end.terminated != first.end.truncated
        assert [(e.player, e.action) for e in first.events] == [(e.player, e.action) for e in again.events]
        assert first.end.returns == again.end.returns
        assert all(e.telemetry["legal"] for e in first.events)  # random-legal play: every move accepted by TextArena
    assert random.getstate() == before


def test_a_title_game_class_conforms_and_pickles():
    cls = title_game("ColonelBlotto-v0", vocabulary=BLOTTO, decision_cap=40, chance=False)  # Blotto draws nothing
    game = cls()
    assert_conformance(game, max_examples=3, checks=[c for c in CONFORMANCE_CHECKS if c != "cross_process_determinism"])
    pos = game.start(5)
    twin = pickle.loads(pickle.dumps(game))
    assert type(twin) is cls and twin.observe(twin.start(5), 0) == game.observe(pos, 0)
    assert title_game("ColonelBlotto-v0", vocabulary=BLOTTO, decision_cap=40, chance=False) is cls


def test_the_decision_cap_ends_a_long_game_as_truncation():
    cls = title_game("ColonelBlotto-v0", vocabulary=BLOTTO, decision_cap=5)
    record = _play(cls(), 0)
    assert record.end.truncated and len(record.events) == 5
    game = cls()
    pos = game.start(0)
    while not game.is_over(pos):
        pos = game.act(pos, game.current_player(pos), game.legal(pos, game.current_player(pos))[0])
    assert game.end_kind(pos.state) is EndKind.DECISION_CAP


def test_registered_unavailable_and_unknown_ids():
    assert title_game("TicTacToe-v0") is load("games", "textarena/TicTacToe-v0")
    with pytest.raises(ConfigError, match="registered title with an exact legal set"):
        title_game("TicTacToe-v0", vocabulary=("[0]",))
    with pytest.raises(PluginUnavailableError, match="NLTK"):
        title_game("SpellingBee-v0")
    with pytest.raises(UnknownGameError, match="did you mean ColonelBlotto-v0"):
        title_game("ColonelBloto-v0")


@pytest.mark.parametrize(
    "options,message",
    [
        (dict(players=(3, 2)), "1 <= min <= max"),
        (dict(decision_cap=0), "at least 1"),
        (dict(vocabulary=("[A20 B0 C0]", "  ")), "non-blank strings"),
        (dict(vocabulary=("[A20 B0 C0]", "[A20 B0 C0]")), "duplicate"),
    ],
)
def test_bad_options_name_the_fix(options, message):
    with pytest.raises(ConfigError, match=message):
        title_game("ColonelBlotto-v0", **options)
