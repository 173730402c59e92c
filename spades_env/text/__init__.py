"""The game as text: what one seat knows, in English and as JSON, and answers read back.

For language-model agents and anyone who reads the game rather than its arrays. Three
parts, all for one seat of one game at one decision:

- ``seat_json(state, game, seat)``: a JSON-ready dict of what the seat knows and nothing
  more: its hand (none while it may still bid blind nil, RULES.md §2), every bid, every
  finished trick with who played what and who won it, the trick in progress, tricks won,
  scores and bags, the dealer, the trump and whether it is broken, the voids shown, the
  exchange cards it passed and received, the rules in force and, when the seat is to
  act, its legal actions by name. Open-hands rules (RULES.md §6 ``open_hands``) add the
  other hands; two_player (RULES.md §6) the card looked at, the cards seen and the stock.
- ``seat_text(state, game, seat)``: the same as readable English (``view_text`` of the
  dict); ``parse_text`` reads such a text back into the dict, so the text is complete.
  ``json_to_obs`` turns the dict into the engine's int16 encoding of that seat
  (`spades_env.observation`): the tests check both round trips against the engine on
  every decision of hands of every preset.
- ``parse_answer(answer, state, game)``: a free-form answer (``bid 4``, ``nil``,
  ``blind nil``, ``play QH``, ``Q♥``, ``queen of hearts``, ``10♥``, ``pass 2C``, ``keep``,
  ``trump hearts``; any case, extra words, five languages) -> the legal action it commits
  to, or ``AnswerError`` saying why not: not understood, or not legal with the rule it
  breaks (the engine's own message, `engine.explain_illegal`, citing RULES.md). The last
  final-answer tag (``Final answer: Q♥``, ``<answer>Q♥</answer>``, ``\\boxed{}``, a JSON
  ``"action"``; TextArena's ``[play Q♥]``) decides alone; without one, negated, asked,
  weighed and other seats' actions are never the reading, and anything doubtful is not
  understood (`answers`, `reading`). ``read_answer`` reads without the rules' check.

Seats are named North, East, South, West (`engine.seat_name`; a fifth seat is ``seat 4``)
and cards in the project's notation (`spades_env.cards`): ``card_to_str`` (``QH``, ``TD``)
in JSON, with suit symbols (``Q♥``) in English. The whole table (every hand) is a
separate, named view: ``render.render_state(state, show_all=True)``.

The parts live in `view` (the JSON view and back to the encoding), `prose` (the English
and its parse-back), `answers` (the answer reader: tags, the rules' check), `reading`
(what an answer commits to) and `names` (how they name cards and actions); this package
gives their public names.
"""

from spades_env.text.answers import (
    AnswerError,
    final_tag,
    parse_answer,
    parse_view_answer,
    read_answer,
)
from spades_env.text.names import action_name
from spades_env.text.prose import parse_text, rules_text, seat_text, view_text
from spades_env.text.view import TEXT_VERSION, json_to_obs, obs_extras, seat_json, view_json

__all__ = [
    "TEXT_VERSION",
    "AnswerError",
    "action_name",
    "final_tag",
    "json_to_obs",
    "obs_extras",
    "parse_answer",
    "parse_text",
    "parse_view_answer",
    "read_answer",
    "rules_text",
    "seat_json",
    "seat_text",
    "view_json",
    "view_text",
]
