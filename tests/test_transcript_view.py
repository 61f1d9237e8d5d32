"""The transcript view (issue 20): each seat's conversation only grows (turn k = turn k-1 + the
answer + one new user message), its first turn is the snapshot prompt, it never shows what the
seat may not see, and the conversation rules (unanswered turns, re-asks, retries, LRU bound)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError
from arena_core.game import Position
from arena_core.players import Decision
from arena_core.registry import make_game
from arena_core.transcript import GenericTranscriptView, TranscriptTurn, TranscriptView, observation_changes
from arena_core.views import get_view
from arena_players.conversation import NO_ANSWER, NOT_ACCEPTED, Conversation, SeatConversations
from arena_players.llm_common import ViewPrompts

GAMES = {
    "kuhn": ("kuhn_poker", None),
    "megagem3": ("megagem", 3),
    "liarsdice": ("textarena/LiarsDice-v0", None),
    "connectfour": ("textarena/ConnectFour-v0", None),
    "matrix": ("matrix", None),
}
_cache: dict[str, object] = {}


def game_of(key: str):
    if key not in _cache:
        gid, n = GAMES[key]
        if gid.startswith("textarena/"):
            pytest.importorskip("textarena")
        _cache[key] = make_game(gid, num_players=n) if n else make_game(gid)
    return _cache[key]


def play(game, seed: int, *, max_decisions: int = 60, fail_every: int = 0, reask_every: int = 0, retry_every: int = 0):
    """Play a seeded random game with one ViewPrompts (transcript) per game, yielding per
    decision: (seat, decision, prompt sent, what the player then did)."""
    prompts = ViewPrompts("transcript")
    rng = np.random.default_rng(seed)
    pos = game.start(seed)
    for seat in range(game.num_players):
        prompts.begin_episode(game, seat, seed)
    n = 0
    while not game.is_over(pos) and n < max_decisions:
        seat = game.current_player(pos)
        decision = Decision.at(game, pos, seat, seed)
        prompt = prompts.prompt(decision)
        n += 1
        legal = game.legal(pos, seat)
        action = legal[int(rng.integers(len(legal)))]
        answer = f"I choose {game.action_to_str(action)}"
        if fail_every and n % fail_every == 0:
            yield seat, decision, prompt, ("failed", None)  # the request failed: no answer
        elif retry_every and n % retry_every == 0:
            second = prompts.retry(prompt, "hmm", "feedback: say it again")
            prompts.answered(second, answer)
            yield seat, decision, prompt, ("retried", second)
        else:
            prompts.answered(prompt, answer)
            yield seat, decision, prompt, ("answered", answer)
        if reask_every and n % reask_every == 0:  # the policy asks the same decision again
            again = prompts.prompt(decision)
            prompts.answered(again, answer)
            yield seat, decision, again, ("reasked", answer)
        pos = game.act(pos, seat, action)


def check_extends(game_key: str, seed: int, **kw) -> int:
    game = game_of(game_key)
    last: dict[int, tuple[list, tuple]] = {}  # seat -> (messages sent, what followed)
    turns = 0
    for seat, decision, prompt, (kind, extra) in play(game, seed, **kw):
        msgs = prompt.messages
        if seat not in last:
            # a seat's first turn is exactly the snapshot prompt (system rules + the full state)
            assert msgs == decision.prompt().messages()
        else:
            before, (prev_kind, prev_extra) = last[seat]
            if prev_kind == "failed" and msgs == before:
                pass  # the same decision asked again while unanswered: the same request
            else:
                if prev_kind == "answered" or prev_kind == "reasked":
                    answer = [{"role": "assistant", "content": prev_extra}]
                elif prev_kind == "retried":
                    answer = list(prev_extra.messages[len(before) :]) + [
                        {"role": "assistant", "content": msgs[len(prev_extra.messages)]["content"]}
                    ]
                    assert answer[-1]["content"].startswith("I choose")
                else:
                    answer = [{"role": "assistant", "content": NO_ANSWER}]
                # turn k = turn k-1's list + the answer of k-1 + exactly one new user message
                assert msgs[: len(before)] == before
                assert msgs[len(before) : -1] == answer
                assert msgs[-1]["role"] == "user" and len(msgs) == len(before) + len(answer) + 1
                if kind == "reasked":
                    assert msgs[-1]["content"].startswith(NOT_ACCEPTED)
                turns += 1
        if kind == "retried":
            assert extra.messages[: len(msgs)] == msgs and [m["role"] for m in extra.messages[len(msgs) :]] == [
                "assistant",
                "user",
            ]
        roles = [m["role"] for m in msgs if m["role"] != "system"]
        assert all(a != b for a, b in zip(roles, roles[1:])), "user and assistant alternate"
        last[seat] = (msgs, (kind, extra))
    return turns


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(GAMES)),
    st.integers(0, 10_000),
    st.sampled_from([0, 3, 7]),
    st.sampled_from([0, 4, 9]),
    st.sampled_from([0, 5]),
)
def test_each_turn_extends_the_last_by_the_answer_and_one_user_message(key, seed, fail, reask, retry):
    check_extends(key, seed, fail_every=fail, reask_every=reask, retry_every=retry, max_decisions=40)


@pytest.mark.parametrize("key", ["kuhn", "megagem3", "liarsdice", "connectfour"])
def test_every_game_with_more_than_one_turn_per_seat_gets_later_turns(key):
    assert sum(check_extends(key, seed, max_decisions=40) for seed in range(3)) > 0


def test_games_bring_their_own_transcript_view_and_every_game_has_one():
    from arena_games.megagem.transcript import MegaGemTranscriptView

    assert isinstance(get_view(game_of("megagem3"), "transcript"), MegaGemTranscriptView)
    assert isinstance(get_view(game_of("kuhn"), "transcript"), GenericTranscriptView)
    assert isinstance(get_view(game_of("matrix"), "transcript"), GenericTranscriptView)
    assert isinstance(get_view(game_of("megagem3"), "transcript"), TranscriptView)
    pytest.importorskip("textarena")
    from arena_games.textarena.adapter import TextArenaTranscriptView

    assert isinstance(get_view(game_of("liarsdice"), "transcript"), TextArenaTranscriptView)


# ---------------------------------------------------------------- hidden information
def resampled(game, pos, seat, rng):
    """The position with everything ``seat`` cannot see redrawn: the hidden state from the
    game's sampler, and other seats' pending (committed, unrevealed) moves replaced."""
    state = game.sample_hidden_state(pos.state, seat, rng)
    pending = tuple(
        (p, game.legal_actions(state, p)[int(rng.integers(len(game.legal_actions(state, p))))]) for p, _ in pos.pending
    )
    return Position(state, pending, pos.ply)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["kuhn", "megagem3"]), st.integers(0, 10_000))
def test_a_turn_is_the_same_whatever_the_seat_cannot_see(key, seed):
    """Every turn's messages are identical when the hidden state (other hands, the deck, the
    others' sealed bids) is redrawn consistently with the seat's view: the transcript reveals
    nothing the seat may not know."""
    game = game_of(key)
    view = get_view(game, "transcript")
    rng = np.random.default_rng(seed)
    markers: dict[int, object] = {}
    pos = game.start(seed)
    checked = 0
    while not game.is_over(pos) and checked < 45:
        seat = game.current_player(pos)
        since = markers.get(seat)
        turn = view.turn(game, pos, seat, since)
        for _ in range(2):
            other = view.turn(game, resampled(game, pos, seat, rng), seat, since)
            assert other.messages == turn.messages and other.legal == turn.legal
        markers[seat] = turn.marker
        checked += 1
        legal = game.legal(pos, seat)
        pos = game.act(pos, seat, legal[int(rng.integers(len(legal)))])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_textarena_transcript_shows_only_the_seats_own_messages(seed):
    """LiarsDice: the other player's dice (messages only in its inbox) never appear in this
    seat's conversation; every line of a later turn is a message this seat received."""
    game = game_of("liarsdice")
    convs: dict[int, list] = {}
    final = None
    for seat, decision, prompt, _ in play(game, seed, max_decisions=30):
        convs[seat] = prompt.messages
        final = decision
    state = final.view_with(lambda g, pos, s: pos.state)
    for seat, msgs in convs.items():
        inbox = "\n".join(m.render() for m in state.messages(seat))
        own = {m.render() for m in state.messages(seat)}
        theirs = {m.render() for p in range(game.num_players) if p != seat for m in state.messages(p)}
        secret = {t for t in theirs - own if "dice are" in t.lower()}
        assert secret, "the title sends each player its own dice"
        text = "\n".join(m["content"] for m in msgs if m["role"] != "assistant") + "\n"
        assert not any(t + "\n" in text for t in secret)
        for m in msgs[3:]:
            if m["role"] == "user":  # a later turn: a run of this seat's own messages, then its legal moves
                body = m["content"].split("\n\nLegal actions:")[0]
                assert body == "(no new messages)" or ("\n" + body + "\n") in ("\n" + inbox + "\n")


# ---------------------------------------------------------------- the pieces
def pass_then_bet(game, pos):
    """Kuhn: seat 0 passes, seat 1 bets (seat 0 is to act again)."""
    pos = game.act(pos, 0, game.action_from_str(pos, 0, "pass"))
    return game.act(pos, 1, game.action_from_str(pos, 1, "bet"))


def test_observation_changes_show_new_entries_of_a_growing_list():
    before = {"history": ["pass"], "pot": 2, "card": "K", "gone": 1}
    after = {"history": ["pass", "bet"], "pot": 3, "card": "K"}
    assert observation_changes(before, after) == ["gone: (gone)", 'history (new): ["bet"]', "pot: 3"]
    assert observation_changes(after, after) == []
    assert observation_changes({"h": [1, 2]}, {"h": [3]}) == ["h: [3]"]


def test_generic_view_later_turn_lists_changes_and_legal_moves():
    game = game_of("kuhn")
    view = GenericTranscriptView()
    pos = game.start(0)
    first = view.turn(game, pos, 0, None)
    assert [m["role"] for m in first.messages] == ["system", "user"]
    pos = game.act(
        game.act(pos, 0, game.legal(pos, 0)[0]), 1, game.legal(game.act(pos, 0, game.legal(pos, 0)[0]), 1)[1]
    )
    later = view.turn(game, pos, 0, first.marker)
    (msg,) = later.messages
    assert msg["role"] == "user"
    assert 'history (new): ["pass", "bet"]' in msg["content"] and "pot: 3" in msg["content"]
    assert msg["content"].endswith("Legal actions: pass, bet") and "card" not in msg["content"]


class _BadView:
    def turn(self, game, pos, player, since):
        return TranscriptTurn(({"role": "system", "content": "s"}, {"role": "user", "content": "u"}), ())

    def parse(self, game, pos, player, text):  # pragma: no cover - never reached
        raise AssertionError


def test_a_view_that_resends_its_opening_is_refused():
    game = game_of("kuhn")
    conv = Conversation()
    pos = game.start(0)
    conv.ask(_BadView(), Decision.at(game, pos, 0, 0))
    conv.answer("pass")
    pos = game.act(
        game.act(pos, 0, game.legal(pos, 0)[0]), 1, game.legal(game.act(pos, 0, game.legal(pos, 0)[0]), 1)[1]
    )
    with pytest.raises(ConfigError, match="exactly one user message"):
        conv.ask(_BadView(), Decision.at(game, pos, 0, 0))


def test_a_lower_ply_starts_a_new_conversation_and_lru_bounds_memory():
    game = game_of("kuhn")
    view = get_view(game, "transcript")
    conv = Conversation()
    pos = game.start(0)
    after = pass_then_bet(game, pos)
    conv.ask(view, Decision.at(game, pos, 0, 0))
    conv.answer("pass")
    assert conv.ask(view, Decision.at(game, after, 0, 0)).turn == 1
    conv.answer("bet")
    restarted = conv.ask(view, Decision.at(game, pos, 0, 0))
    assert restarted.turn == 0 and len(restarted.messages) == 2
    seats = SeatConversations(max_conversations=2)
    a = seats.get(1, 0)
    seats.get(2, 0)
    assert seats.get(1, 0) is a  # used again: now the most recent
    seats.get(3, 1)
    assert len(seats) == 2 and (2, 0) not in seats.keys() and seats.get(1, 0) is a
    seats.begin(1, 0)
    assert seats.get(1, 0) is not a
    with pytest.raises(ConfigError):
        SeatConversations(0)


def test_snapshot_view_prompts_are_the_text_views():
    for key in ("kuhn", "megagem3", "matrix"):
        game = game_of(key)
        pos = game.start(4)
        seat = game.current_player(pos)
        decision = Decision.at(game, pos, seat, 4)
        p = ViewPrompts("snapshot").prompt(decision)
        assert p.messages == decision.prompt().messages() and p.conversation is None and p.turn == 0
    with pytest.raises(ConfigError, match="snapshot"):
        ViewPrompts("transcripts")  # type: ignore[arg-type]


# ---------------------------------------------------------------- TextArena's compact legal list
def expand(text: str, vocabulary) -> list[str]:
    """Read a :func:`compact_legal` text back into the list of actions."""
    import re

    from arena_games.textarena.text import _NUMBER

    out = []
    for part in re.split(r", (?=every |\[)", text) if text else []:
        m = re.fullmatch(r"every (.+) from (.+) to (.+) \((\d+) actions\)", part)
        if m is None:
            out.append(part)
            continue
        form, first, last, n = m.groups()
        members = [a for a in vocabulary if _NUMBER.sub("#", a) == form]
        run = members[members.index(first) : members.index(last) + 1]
        assert len(run) == int(n)
        out.extend(run)
    return out


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from([3, 5, 8]))
def test_compact_legal_lists_exactly_the_legal_actions(data, min_run):
    from arena_games.textarena.text import compact_legal

    vocabulary = ["[Call]"] + [f"[Bid: {q}, {f}]" for q in range(1, 13) for f in range(1, 7)] + ["[col 1]", "[col 2]"]
    picks = data.draw(st.lists(st.booleans(), min_size=len(vocabulary), max_size=len(vocabulary)))
    legal = [a for a, keep in zip(vocabulary, picks) if keep]
    text = compact_legal(legal, vocabulary, min_run=min_run)
    assert expand(text, vocabulary) == legal
    assert compact_legal(legal, vocabulary, min_run=0) == ", ".join(legal)
    if legal == vocabulary[1:73]:
        assert text == "every [Bid: #, #] from [Bid: 1, 1] to [Bid: 12, 6] (72 actions)"


def test_liarsdice_turns_write_the_bids_as_a_range():
    from arena_games.textarena.text import compact_legal

    game = game_of("liarsdice")
    shown = 0
    for _, decision, prompt, _ in play(game, 2, max_decisions=30):
        if prompt.turn > 0:
            legal_line = prompt.messages[-1]["content"].split("Legal actions: ")[-1]
            assert legal_line == compact_legal(decision.legal_actions, game.title.vocabulary)
            assert expand(legal_line, game.title.vocabulary) == list(decision.legal_actions)
            shown += "every [Bid: #, #]" in legal_line
    assert shown > 0
