"""Writes answer_corpus.jsonl: labelled answers in the styles language models answer in,
for every phase of the rules and the variants, read by tests/llm/test_answer_reader.py.

``python tests/data/make_answer_corpus.py`` rewrites the file (the data is committed; this
script is how it was made). Each line: ``text`` (the answer), ``preset`` and ``phase``
(the context), ``held`` (the seat's cards, where it has seen them), ``legal`` (the legal
actions, as the prompt names them), ``meaning`` (the action the answer means, as the
prompt names it, or ``"not understood"`` where it commits to no single action) and
``style``. A meaning is what a careful human reads, not what the reader reads: an answer
that corrects itself means its correction, though the reader may find it doubtful.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).with_name("answer_corpus.jsonl")
NU = "not understood"

HAND = ["AS", "KS", "7S", "3S", "AH", "QH", "3H", "KD", "8D", "3D", "JC", "TC", "2C"]
SYM = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_WORD = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
RANK_WORD = {
    "A": "ace", "K": "king", "Q": "queen", "J": "jack", "T": "ten", "9": "nine",
    "8": "eight", "7": "seven", "3": "three", "2": "two",
}  # fmt: skip
NUM_WORD = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
SV = {1: "ett", 2: "två", 3: "tre", 4: "fyra", 5: "fem", 6: "sex", 7: "sju"}
DE = {1: "eins", 2: "zwei", 3: "drei", 4: "vier", 5: "fünf", 6: "sechs", 7: "sieben"}
ES = {1: "uno", 2: "dos", 3: "tres", 4: "cuatro", 5: "cinco", 6: "seis", 7: "siete"}
FR = {1: "un", 2: "deux", 3: "trois", 4: "quatre", 5: "cinq", 6: "six", 7: "sept"}


def u(card: str) -> str:
    """A♠ style."""
    return card[0] + SYM[card[1]]


def words(card: str) -> str:
    return f"{RANK_WORD[card[0]]} of {SUIT_WORD[card[1]]}"


def bid_name(b: int) -> str:
    return "nil" if b == 0 else f"bid {b}"


BID_LEGAL = ["nil"] + [f"bid {k}" for k in range(1, 14)]
records: list[dict] = []


def add(text, meaning, style, phase="bid", preset="standard", held=None, legal=None):
    records.append(
        {
            "text": text,
            "preset": preset,
            "phase": phase,
            "held": held,
            "legal": legal if legal is not None else BID_LEGAL,
            "meaning": meaning,
            "style": style,
        }
    )


# ----------------------------------------------------------------------------- bids
def bid_templates(b: int) -> list[tuple[str, str]]:
    """(style, text) meaning bid `b` (1..7)."""
    w = NUM_WORD[b]
    other = b + 1 if b < 7 else b - 1
    return [
        ("terse", f"{b}"),
        ("terse", f"bid {b}"),
        ("terse", f"Bid {b}."),
        ("terse", f"BID {b}"),
        ("terse", f"{w.capitalize()}."),
        ("tagged", f"Final answer: bid {b}"),
        ("tagged", f"Final answer: {b}"),
        ("tagged", f"<answer>bid {b}</answer>"),
        ("tagged", f"\\boxed{{{b}}}"),
        ("json", f'{{"action": "bid {b}"}}'),
        (
            "json",
            f'```json\n{{"reasoning": "two sure spade tricks and the ace of hearts", '
            f'"action": "bid {b}"}}\n```',
        ),
        ("chatty", f"I think I'll bid {b} this time."),
        ("chatty", f"Let's go with {b}!"),
        ("chatty", f"My bid is {b}."),
        ("chatty", f"Okay, I'm going to bid {w}."),
        ("markdown", f"**Bid:** {b}"),
        ("markdown", f"### Decision\n\n**bid {b}**"),
        (
            "markdown",
            f"- Spades: A, K, 7, 3\n- Hearts: A, Q, 3\n- Side aces: 1\n\n**Final answer: bid {b}**",
        ),
        (
            "reasoning",
            f"Let me count my tricks. I hold 4 spades including the ace and king, which "
            f"should give me 2 or 3 tricks. The ace of hearts is 1 more. The king of "
            f"diamonds might take a trick. Partner has not bid yet. Overall I expect "
            f"around {b} tricks.\n\nFinal answer: bid {b}",
        ),
        (
            "reasoning",
            f"East bid {other} and partner bid 2, so the table is already busy. With my "
            f"hand I can count {b} solid tricks, so I'll bid {b}.",
        ),
        (
            "reasoning",
            f"Thinking step by step:\n1. High spades: 2 tricks.\n2. Aces outside: 1 trick."
            f"\n3. Length: maybe 1 more.\nTotal: about {b}. Final answer: bid {b}",
        ),
        ("hedge", f"Probably {b}. Final answer: bid {b}"),
        ("hedge", f"I'm fairly confident {b} is right, so bid {b}."),
        ("hedge", f"It's close, but I'll bid {b}."),
        ("negation", f"I will not bid nil. I bid {b}."),
        ("negation", f"No nil for me; bid {b}."),
        ("negation", f"Final answer: bid {b} (not nil)"),
        ("negation", f"Nil is too risky here, so I'll bid {b}."),
        ("negation", f"Nil would be a mistake with two aces. Bid {b}."),
        ("negation", f"I won't go nil, I'll bid {b}."),
        ("words", f"I'll bid {w}."),
        ("words", f"My bid: {w} tricks."),
        ("weighed", f"I could bid {other} or {b}. {other} feels greedy, so I'll bid {b}."),
        (
            "weighed",
            f"Options: nil, {b}, or {other}. Nil is out with these aces. Between {b} and "
            f"{other}, the safer one is {b}.\n\nFinal answer: bid {b}",
        ),
        ("weighed", f"Should I bid {other}? No, that overbids. Final answer: {b}"),
        ("swedish", f"Jag bjuder {b}."),
        ("swedish", f"Jag bjuder {SV[b]} stick."),
        ("german", f"Ich biete {b}."),
        ("german", f"Mein Gebot: {DE[b]}"),
        ("spanish", f"Apuesto {b}."),
        ("spanish", f"Mi apuesta es {ES[b]}."),
        ("french", f"J'annonce {b}."),
        ("french", f"Réponse finale : {FR[b]}"),
    ]


for b in (1, 2, 3, 4, 5, 7):
    for style, text in bid_templates(b):
        add(text, bid_name(b), style)

nil_texts = [
    ("terse", "nil"),
    ("terse", "Nil."),
    ("terse", "NIL"),
    ("tagged", "Final answer: nil"),
    ("tagged", "<answer>nil</answer>"),
    ("tagged", "Final answer: NIL"),
    ("json", '{"action": "nil"}'),
    ("chatty", "I'm going nil this hand!"),
    ("chatty", "Let's try nil, my hand is all low cards."),
    ("markdown", "**Decision:** nil"),
    (
        "reasoning",
        "My highest spade is the 7 and I have no aces or kings. Partner bid 5, "
        "so they can cover. I'll bid nil.",
    ),
    (
        "reasoning",
        "Counting tricks: zero sure ones. Every suit has low cards. A nil "
        "bid looks safe.\n\nFinal answer: nil",
    ),
    ("negation", "I won't bid 3 with this hand; nil is right. Final answer: nil"),
    ("negation", "Bidding 2 would be a mistake. Nil."),
    ("words", "I bid zero."),
    ("hedge", "Nil seems right to me. Final answer: nil"),
    ("swedish", "Jag bjuder nil."),
    ("german", "Ich sage Null an."),
    ("spanish", "Apuesto nil."),
    ("french", "J'annonce nil."),
]
for style, text in nil_texts:
    add(text, "nil", style)

bid_not_understood = [
    ("prose", "Let me think about it."),
    ("prose", "I'll pass on this one."),
    ("prose", "As an AI, I find card games fascinating!"),
    ("prose", "This hand is tricky."),
    ("negation", "No blind nil."),
    ("negation", "Not nil."),
    ("negation", "I would never bid nil with two aces."),
    ("weighed", "Bid 3 or 4."),
    ("weighed", "Maybe 3, maybe 4."),
    ("weighed", "Hmm, 3? 4?"),
    ("weighed", "Either 2 or 3 would work here."),
    ("weighed", "I'm torn between nil and 2."),
    ("weighed", "Should I bid nil? Or 3?"),
    ("hedge", "Somewhere around 3 or 4 tricks."),
    ("invalid", "bid -1"),
    ("invalid", "bid 3.5"),
    ("invalid", "Final answer: bid 2.5"),
    ("invalid", "I bid " + "9" * 40 + "."),
    ("tagged", "Final answer: I need more information."),
    ("tagged", "Final answer: bid 3 or bid 4"),
    ("prose", "I have 4 spades and 2 aces."),
    ("prose", "Partner bid 4 and East bid 3."),
    ("prose", "What does my partner think?"),
    ("weighed", "If partner bids nil I'd bid 5, otherwise 3."),
    ("json", '{"action": ""}'),
    ("markdown", "**Bid:** TBD"),
    ("swedish", "Jag vet inte."),
    ("german", "Ich weiß es nicht."),
    ("spanish", "No estoy seguro."),
    ("french", "Je ne sais pas."),
]
for style, text in bid_not_understood:
    add(text, NU, style)

# self-corrections: they mean the correction; the reader may find them doubtful
add("I'll bid 3. Actually, wait, I'll bid 4.", "bid 4", "correction")
add("Bid 5... no, too greedy. Bid 4.", "bid 4", "correction")
add("Final answer: bid 3\n\nHmm, on reflection: Final answer: bid 4", "bid 4", "two tags")
add("Final answer: bid 3 … Final answer: bid 4", "bid 4", "two tags")
add("<answer>nil</answer> no wait <answer>bid 2</answer>", "bid 2", "two tags")

# variants of the bidding: family (no nil), whiz (nil or the spades held), mirror, suicide
FAMILY = [f"bid {k}" for k in range(1, 14)]
for style, text, meaning in [
    ("terse", "3", "bid 3"),
    ("chatty", "I'll go for 4 tricks.", "bid 4"),
    ("tagged", "Final answer: bid 2", "bid 2"),
    ("negation", "Nil isn't allowed in this game, so bid 1.", "bid 1"),
    ("words", "Two.", "bid 2"),
    ("tagged", "Final answer: nil", "nil"),  # an illegal reading, still read
    ("prose", "The family rules make this easy.", NU),
]:
    add(text, meaning, style, preset="family", legal=FAMILY)
for style, text, meaning in [
    ("terse", "bid 4", "bid 4"),
    ("tagged", "Final answer: nil", "nil"),
    ("chatty", "With four spades, whiz says I bid 4.", "bid 4"),
    ("negation", "Not 4: I'll go nil.", "nil"),
    ("weighed", "Nil or 4, the only two choices.", NU),
]:
    add(text, meaning, style, preset="whiz", legal=["nil", "bid 4"])
for style, text, meaning in [
    ("terse", "bid 4", "bid 4"),
    ("reasoning", "Mirror forces my bid to equal my spades: 4. Final answer: bid 4", "bid 4"),
]:
    add(text, meaning, style, preset="mirror", legal=["bid 4"])
for style, text, meaning in [
    ("reasoning", "Partner bid 3, so suicide rules force me to bid nil. Final answer: nil", "nil"),
    ("negation", "Partner already went nil, so I must not; I bid 3.", "bid 3"),
    ("terse", "nil", "nil"),
]:
    add(text, meaning, style, preset="suicide", legal=["nil"])

# ----------------------------------------------------------------------------- blind nil
BLIND_LEGAL = ["blind nil", "see hand"]
for style, text, meaning in [
    ("terse", "blind nil", "blind nil"),
    ("terse", "see hand", "see hand"),
    ("tagged", "Final answer: blind nil", "blind nil"),
    ("tagged", "Final answer: see hand", "see hand"),
    ("chatty", "We're 150 behind, time for a blind nil!", "blind nil"),
    ("chatty", "I'll look at my cards first.", "see hand"),
    ("chatty", "Let me see my hand.", "see hand"),
    ("negation", "No blind nil.", "see hand"),
    ("negation", "I won't risk a blind nil. See hand.", "see hand"),
    ("negation", "Blind nil would be too risky. Final answer: see hand", "see hand"),
    ("negation", "Not seeing the hand: blind nil.", "blind nil"),
    (
        "reasoning",
        "We trail by 180 points and the target is 500. A blind nil scores 200 if "
        "it works, and partner can cover. It is the best chance to catch up.\n\nFinal "
        "answer: blind nil",
        "blind nil",
    ),
    (
        "reasoning",
        "We are only 100 behind with plenty of hands left; no need to gamble. I'll see my hand.",
        "see hand",
    ),
    ("json", '{"action": "blind nil"}', "blind nil"),
    ("json", '{"action": "see hand"}', "see hand"),
    ("markdown", "**Decision:** blind nil", "blind nil"),
    ("swedish", "Jag bjuder blind nil.", "blind nil"),
    ("german", "Ich möchte meine Karten ansehen.", "see hand"),
    ("spanish", "Quiero ver mis cartas.", "see hand"),
    ("french", "Je veux voir mes cartes.", "see hand"),
    ("weighed", "Blind nil or see hand? Hard to say.", NU),
    ("prose", "Blind what?", NU),
    ("prose", "I'm thinking.", NU),
]:
    add(text, meaning, style, phase="blind", legal=BLIND_LEGAL)


# ----------------------------------------------------------------------------- card play
def play_templates(c: str, low: str) -> list[tuple[str, str]]:
    """(style, text) meaning play card `c`; `low` is another held card."""
    return [
        ("terse", u(c)),
        ("terse", c),
        ("terse", f"play {c}"),
        ("terse", f"Play {u(c)}."),
        ("terse", f"{c[0]}{c[1].lower()}"),
        ("tagged", f"Final answer: play {u(c)}"),
        ("tagged", f"Final answer: {c}"),
        ("tagged", f"<answer>play {c}</answer>"),
        ("tagged", f"Reasoning done.\nFinal answer: **{u(c)}**"),
        ("json", f'{{"action": "play {u(c)}"}}'),
        ("json", f'{{"reasoning": "partner is winning", "action": "{c}"}}'),
        ("chatty", f"I'll play the {words(c)}."),
        ("chatty", f"Let's lead the {u(c)}!"),
        ("chatty", f"I think the best is the {words(c)}."),
        ("markdown", f"**Play:** {u(c)}"),
        ("markdown", f"## My move\n\nI play **{u(c)}**."),
        (
            "reasoning",
            f"West led the 9{SYM[c[1]]} and partner followed with the J{SYM[c[1]]}. "
            f"Partner is winning the trick, but East has not played yet. I'll play the "
            f"{u(c)}.",
        ),
        (
            "reasoning",
            f"Let me think. Spades are not broken. I hold {u(c)} and {u(low)} among "
            f"others. Keeping {u(low)} for later is better.\n\nFinal answer: play {u(c)}",
        ),
        ("negation", f"I'd rather not play the {u(low)}; play {u(c)}."),
        ("negation", f"Not the {u(low)}. The {u(c)}."),
        ("negation", f"Playing the {u(low)} would be a mistake, so I play the {u(c)}."),
        ("negation", f"I'll play the {u(c)} rather than the {u(low)}."),
        ("hedge", f"Probably the {u(c)} is best. Final answer: {u(c)}"),
        ("weighed", f"{u(low)} or {u(c)}? The {u(c)} keeps control. Final answer: {u(c)}"),
        ("words", f"The {words(c)}, please."),
        ("swedish", f"Jag spelar {u(c)}."),
        ("german", f"Ich spiele {u(c)}."),
        ("spanish", f"Juego el {u(c)}."),
        ("french", f"Je joue le {u(c)}."),
    ]


PLAY_LEGAL = [f"play {u(c)}" for c in HAND]
for c, low in [("AH", "3H"), ("KD", "3D"), ("TC", "2C"), ("QH", "AH"), ("8D", "KD"),
               ("3S", "AS"), ("JC", "TC")]:  # fmt: skip
    for style, text in play_templates(c, low):
        add(text, f"play {u(c)}", style, phase="play", held=HAND, legal=PLAY_LEGAL)

play_not_understood = [
    ("prose", "As expected, partner is winning, so I'll play low."),
    ("prose", "As an AI, I find card games fascinating!"),
    ("prose", "Play low."),
    ("prose", "I'll play my lowest heart."),
    ("prose", "Follow suit with something small."),
    ("prose", "Ah, the classic dilemma."),
    ("prose", "As usual, I'll duck."),
    ("weighed", "Play JD or TD"),
    ("weighed", "Either the 3♥ or the Q♥."),
    ("weighed", "A♥ vs Q♥, tough call."),
    ("weighed", "Maybe the K♦, maybe the 8♦."),
    ("weighed", "Should I play the A♥?"),
    ("negation", "I'd rather not play the T♣."),
    ("negation", "Not the A♠."),
    ("negation", "Definitely not the ace of hearts."),
    ("tagged", "Final answer: the lowest club"),
    ("tagged", "Final answer: play A♥ or Q♥"),
    ("json", '{"action": "play"}'),
    ("prose", "Partner led the K♦ and West played the Q♦."),
    ("prose", "As I see it, spades are not broken."),
    ("swedish", "Jag spelar lågt."),
    ("german", "Ich spiele niedrig."),
    ("spanish", "Juego bajo."),
    ("french", "Je joue petit."),
]
for style, text in play_not_understood:
    add(text, NU, style, phase="play", held=HAND, legal=PLAY_LEGAL)
add(
    "I'll play the K♦. Hmm, no: the A♥ is better.",
    "play A♥",
    "correction",
    phase="play",
    held=HAND,
    legal=PLAY_LEGAL,
)
add("Final answer: play 3♥\nFinal answer: play A♥", "play A♥", "two tags", "play", held=HAND,
    legal=PLAY_LEGAL)  # fmt: skip

# jokers: the Big and Little Joker are the top spades
JOKER_HAND = ["BJ", "LJ", "KS", "4S", "AH", "9H", "KD", "8D", "5D", "JC", "TC", "6C", "3C"]
JOKER_LEGAL = ["play BJ", "play LJ", "play K♠", "play 4♠"]
for style, text, meaning in [
    ("terse", "BJ", "play BJ"),
    ("terse", "play LJ", "play LJ"),
    ("chatty", "Time for the big joker!", "play BJ"),
    ("chatty", "I'll play the little joker.", "play LJ"),
    ("tagged", "Final answer: play BJ", "play BJ"),
    ("negation", "Not the big joker yet; the little joker wins this.", "play LJ"),
    (
        "reasoning",
        "Only spades are led and the A♠ is out. The little joker is now the "
        "second highest card, the big joker the highest. I'll take it with the Big Joker.",
        "play BJ",
    ),
    ("weighed", "Big joker or little joker?", NU),
    ("json", '{"action": "play LJ"}', "play LJ"),
    ("german", "Ich spiele den großen Joker.", "play BJ"),
]:
    add(text, meaning, style, phase="play", preset="jokers", held=JOKER_HAND, legal=JOKER_LEGAL)

# the blind-nil exchange: a card passed to the partner
EX_LEGAL = [f"pass {u(c)}" for c in HAND]
for c in ("2C", "AS", "QH"):
    for style, text in [
        ("terse", f"pass {c}"),
        ("terse", u(c)),
        ("tagged", f"Final answer: pass {u(c)}"),
        ("chatty", f"I'll pass the {u(c)} to my partner."),
        ("chatty", f"Give partner the {words(c)}."),
        ("json", f'{{"action": "pass {u(c)}"}}'),
        ("negation", f"I won't pass the {u('KD' if c != 'KD' else 'AH')}; pass {u(c)}."),
        ("swedish", f"Jag ger partnern {u(c)}."),
    ]:
        add(text, f"pass {u(c)}", style, phase="exchange", held=HAND, legal=EX_LEGAL)
for style, text in [
    ("prose", "Pass something low."),
    ("weighed", "Pass 2♣ or 3♦."),
    ("negation", "Not the A♠."),
]:
    add(text, NU, style, phase="exchange", held=HAND, legal=EX_LEGAL)

# two_player's draw: keep or discard the card looked at
DRAW_LEGAL = ["keep", "discard"]
for style, text, meaning in [
    ("terse", "keep", "keep"),
    ("terse", "discard", "discard"),
    ("terse", "Keep.", "keep"),
    ("tagged", "Final answer: keep", "keep"),
    ("tagged", "Final answer: discard", "discard"),
    ("chatty", "That's a high spade, I'll keep it!", "keep"),
    ("chatty", "A lowly 2 of clubs, let's discard it.", "discard"),
    ("negation", "Don't keep this one; discard.", "discard"),
    ("negation", "I won't discard the ace of spades. Keep.", "keep"),
    (
        "reasoning",
        "The card is the K♥. Kings win tricks often; the next card is unknown "
        "and probably worse. Final answer: keep",
        "keep",
    ),
    ("json", '{"action": "discard"}', "discard"),
    ("markdown", "**Action:** keep", "keep"),
    ("swedish", "Jag behåller kortet.", "keep"),
    ("german", "Ich behalte die Karte.", "keep"),
    ("spanish", "Descarto esta carta.", "discard"),
    ("french", "Je garde la carte.", "keep"),
    ("weighed", "Keep or discard, hard to say.", NU),
    ("prose", "Interesting card.", NU),
    ("negation", "Not keeping it.", "discard"),
]:
    if meaning == "discard" and text == "Not keeping it.":
        meaning = NU  # a negation without the other choice named: asked again
    add(text, meaning, style, phase="draw", preset="two_player", legal=DRAW_LEGAL)

# auction's naming of trump
TRUMP_LEGAL = ["trump spades", "trump hearts", "trump diamonds", "trump clubs"]
for suit, sv, de, es, fr in [
    ("hearts", "hjärter", "Herz", "corazones", "cœur"),
    ("diamonds", "ruter", "Karo", "diamantes", "carreau"),
    ("spades", "spader", "Pik", "picas", "pique"),
]:
    sym = {"hearts": "♥", "diamonds": "♦", "spades": "♠"}[suit]
    other = "clubs"
    for style, text in [
        ("terse", f"trump {suit}"),
        ("terse", f"{suit.capitalize()}."),
        ("terse", sym),
        ("tagged", f"Final answer: trump {suit}"),
        ("chatty", f"{suit.capitalize()} are trump!"),
        ("chatty", f"I name {suit}."),
        ("negation", f"Not {other}: trump {suit}."),
        ("negation", f"{other.capitalize()} would be a mistake, trump {suit}."),
        ("reasoning", f"I hold five {suit} including the ace and king, and only two "
         f"{other}. Naming {suit} gives us the most trumps.\n\nFinal answer: trump {suit}"),
        ("json", f'{{"action": "trump {suit}"}}'),
        ("swedish", f"Trumf: {sv}."),
        ("german", f"Trumpf ist {de}."),
        ("spanish", f"Triunfo: {es}."),
        ("french", f"Atout {fr}."),
    ]:  # fmt: skip
        add(text, f"trump {suit}", style, phase="trump", preset="auction", legal=TRUMP_LEGAL)
for style, text in [
    ("weighed", "Hearts or spades?"),
    ("negation", "Not spades."),
    ("prose", "Any suit is fine."),
    ("weighed", "Either hearts or diamonds would do."),
]:
    add(text, NU, style, phase="trump", preset="auction", legal=TRUMP_LEGAL)

# ----------------------------------------------------------------------------- written by hand
# answers as models write them, each on its own: long, mixed, with other actions named
HARD_BIDS = [
    ("Partner bid 4, and I have a decent hand. Let's see: A♠ K♠ are two tricks, A♥ is a "
     "third. I'll bid 3.", "bid 3"),
    ("Looking at my hand, I have strong spades (A♠, K♠, 7♠, 3♠). I estimate 3 tricks.\n\n"
     "**Bid: 3**", "bid 3"),
    ("Since we need 10 tricks as a team and partner bid 6, I'll bid 4.", "bid 4"),
    ("I'm going to bid 3 — nil is off the table with the A♠.", "bid 3"),
    ("The opponents bid 5 and 3. That leaves about 5 tricks for us. I bid 2.", "bid 2"),
    ("Hand analysis:\n* Spades: AKx x -> 2.5 tricks\n* Hearts: AQx -> 1.5 tricks\n"
     "* Diamonds: Kxx -> 0.5\n* Clubs: JTx -> 0\n\nRounding down, final answer: bid 4",
     "bid 4"),
    ("We are at 430 and they are at 380, with 7 bags already. Overbidding is cheap, "
     "underbidding costs bags. Final answer: 4", "bid 4"),
    ("nil? no. 3.", "bid 3"),
    ("Not going nil. Bidding 3.", "bid 3"),
    ("Given that West bid nil, I want to set it. I'll bid 5 and cover high.", "bid 5"),
    ("Bid: 3 (three tricks: A♠, K♠, A♥)", "bid 3"),
    ("I count the A♠, K♠ and A♥ as sure tricks, 3 in all.\nFinal answer: bid 3", "bid 3"),
    ("3 tricks.", "bid 3"),
    ("My answer: 2", "bid 2"),
    ("I would bid 4 here.", "bid 4"),
    ("ok, bid 2 then", "bid 2"),
    ("The answer is 3.", "bid 3"),
    ("4, since partner is likely strong in hearts.", "bid 4"),
    ("I bid 3, not nil and not 4.", "bid 3"),
    ("Going nil is tempting but far too risky with the A♠. I'll bid 3.", "bid 3"),
    ("Bid 4? Bid 5? I'll settle on 4.", "bid 4"),
    ("With 13 cards and only 2 aces, 2 is my bid.", "bid 2"),
    ("I'll bid 3 or maybe 4.", NU),
    ("Two or three tricks, depending on the spades.", NU),
    ("I'd bid 3 if I had the K♥.", NU),
    ("Partner's bid of 4 plus my 3 would be 7.", NU),
    ("Let me reconsider: nil? 2? 3?", NU),
    ("Nil: no.", NU),
    ("Nil, not a chance.", NU),
    ("bid 3, not nil", "bid 3"),
    ("Bid 3, not 4.", "bid 3"),
    ("Nil, no doubt about it.", "nil"),
    ("Going nil would be insane with the A♠, so 3.", "bid 3"),
    ("I was going to bid nil but I'll bid 3 instead.", "bid 3"),
    ("I'd go nil, but my spades are too strong.", NU),
    ("I would bid nil, but the A♠ says otherwise. Bid 2.", "bid 2"),
    ("I'll bid 4 but partner may go nil.", "bid 4"),
    ("I have 3 spades, so 3.", "bid 3"),
    ("Nil is out of the question; 2.", "bid 2"),
    ("Forget nil. Bid 3.", "bid 3"),
    ("Don't even think about nil.", NU),
    ("Final answer: not nil", NU),
]  # fmt: skip
for text, meaning in HARD_BIDS:
    add(text, meaning, "written")

HARD_PLAYS = [
    ("The trick so far: West 9♥, North J♥. East hasn't played. My partner (North) is "
     "currently winning with the J♥. I have A♥, Q♥, 3♥. Playing the 3♥ lets partner keep "
     "the trick.\n\nFinal answer: play 3♥", "play 3♥"),
    ("Partner is winning; I'll dump the 2♣.", "play 2♣"),
    ("I'll trump in with the 3♠ since I'm void in diamonds.", "play 3♠"),
    ("Lead the K♦ to force out the ace.", "play K♦"),
    ("East led the 5♦. I must follow suit. My diamonds: K♦, 8♦, 3♦. Second hand low: 3♦.",
     "play 3♦"),
    ("Spades aren't broken, so I can't lead the A♠. I'll lead the A♥ instead.", "play A♥"),
    ("We've made our bid already, so I'll avoid bags: play the 2♣.", "play 2♣"),
    ("To protect partner's nil, I need to win this trick high: A♥.", "play A♥"),
    ("I lead my ace of hearts.", "play A♥"),
    ("Playing 10♣ here.", "play T♣"),
    ("Q♥ (the queen of hearts) it is.", "play Q♥"),
    ("West has shown out of clubs, so my J♣ is at risk. Still, J♣ is my best lead.",
     "play J♣"),
    ("Final answer: 8♦ — the K♦ stays back to beat East's Q♦ later.", "play 8♦"),
    ("I'll beat East's Q♦ with my K♦.", "play K♦"),
    ("I'll lead my A♥, then follow with the Q♥ next trick.", "play A♥"),
    ("The 3♥ or the Q♥ — I'll go with the Q♥ to push out the king.", "play Q♥"),
    ("Low heart.", NU),
    ("Whatever partner didn't play.", NU),
    ("I'd play the A♥ if spades were broken.", NU),
    ("Hmm, K♦? Or 8♦?", NU),
    ("Play anything but the A♠.", NU),
    ("Play the A♥, but not the A♠.", "play A♥"),
    ("Anything but the K♦, please.", NU),
    ("I'd play the A♥ but East is void.", NU),
    ("I will not play the A♥.", NU),
    ("Playing A♥ is pointless; 3♥.", "play 3♥"),
]  # fmt: skip
for text, meaning in HARD_PLAYS:
    add(text, meaning, "written", phase="play", held=HAND, legal=PLAY_LEGAL)


if __name__ == "__main__":
    with OUT.open("w", encoding="utf-8") as f:
        for i, r in enumerate(records):
            f.write(json.dumps({"id": i, **r}, ensure_ascii=False) + "\n")
    print(f"{len(records)} answers -> {OUT}")
