"""The generic text view: rebuilt from the state, deterministic; the parser reports how it read."""

import json

from hypothesis import given
from hypothesis import strategies as st

from arena_core.text import GenericTextView
from arena_games.kuhn import KuhnAction, KuhnPoker
from toy_games import CountToTwenty

VIEW = GenericTextView()


def test_prompt_is_deterministic_for_the_same_state():
    game = KuhnPoker()
    a = VIEW.prompt(game, game.start(4), 0)
    b = VIEW.prompt(KuhnPoker(), KuhnPoker().start(4), 0)
    assert a == b
    assert a.legal == ("pass", "bet")
    assert json.loads(a.user.split("\n")[1])["card"] in "JQK"


def test_prompt_shows_only_the_players_own_card():
    game = KuhnPoker()
    pos = game.start(0)
    mine = game.observe(pos, 0)["card"]
    theirs = game.observe(pos, 1)["card"]
    text = VIEW.prompt(game, pos, 0).user
    assert f'"card": "{mine}"' in text and f'"card": "{theirs}"' not in text


def _parse(text):
    game = CountToTwenty()
    return VIEW.parse(game, game.start(0), 0, text)


def test_parse_methods():
    assert _parse("add 2").method == "exact"
    r = _parse('reasoning... {"action": "add 3"}')
    assert (r.method, r.action, r.legal) == ("json", 3, True)
    r = _parse('{"action": "add 9"}')  # not a legal string: unparseable, never a guess
    assert (r.method, r.valid, r.legal, r.default_used, r.action) == ("unparseable", False, False, True, 1)
    assert _parse("I think\nadd 1\n").method == "last_line"
    assert _parse("I think\nAnswer: add 3.").method == "answer_line"
    r = _parse("First add 1 looked good, but add 3 wins faster, so I pick that.")  # a mention is no answer
    assert (r.method, r.default_used) == ("unparseable", True)
    r = _parse("no idea")
    assert (r.method, r.valid, r.default_used, r.action) == ("unparseable", False, True, 1)
    assert _parse(None).default_used


def test_the_lenient_mode_is_opt_in_and_reads_the_rightmost_mention():
    game = CountToTwenty()
    lenient = GenericTextView(lenient=True)
    r = lenient.parse(game, game.start(0), 0, "First add 1 looked good, but add 3 wins faster, so I pick that.")
    assert (r.method, r.action) == ("mention", 3)


@given(st.text(alphabet="abcxyz .,\n", max_size=40), st.sampled_from([1, 2, 3]), st.text(alphabet=" .,!?", max_size=20))
def test_a_legal_action_stated_last_is_found_in_noise(prefix, n, suffix):
    r = _parse(f"{prefix}\nMy answer: add {n}{suffix}")
    assert r.action == n and r.legal and not r.default_used


def test_kuhn_prose_answer_is_not_guessed():
    game = KuhnPoker()
    r = VIEW.parse(game, game.start(0), 0, "With a king I bet.")
    assert r.default_used and r.method == "unparseable"
    assert VIEW.parse(game, game.start(0), 0, "With a king I bet.\nAnswer: bet").action is KuhnAction.BET


def test_a_decision_renders_and_parses_through_another_view():
    """``Decision.view_with`` hands a view the game, the position and the seat; ``render`` and
    ``parse_with`` go through it, and the default view gives the same prompt as ``prompt()``."""
    from arena_core.players import Decision

    game = KuhnPoker()
    pos = game.start(3)
    seat = game.current_player(pos)
    decision = Decision.at(game, pos, seat, 3)
    seen = decision.view_with(lambda g, p, s: (g, p, s))
    assert seen == (game, pos, seat)
    view = game.text_view()
    assert decision.render(view) == decision.prompt()
    assert decision.parse_with(view, "bet").action == decision.parse("bet").action


def test_json_field_reads_the_first_object_that_has_a_key():
    from arena_core.text import json_field

    text = 'thinking {not json} then {"note": 1} and {"label": "B", "action": "A"} then {"action": "C"}'
    assert json_field(text, ("action", "label")) == ("action", "A")  # first such object; key order as asked
    assert json_field(text, ("label",)) == ("label", "B")
    assert json_field('{"action": null}', ("action",)) == ("action", None)
    assert json_field("no objects here", ("action",)) is None
