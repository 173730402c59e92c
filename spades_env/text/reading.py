"""How the answer reader finds the action an answer commits to (`commitment`), once the
final-answer tag, if any, has been taken (`spades_env.text.answers`).

The answer is scanned once, left to right (every pattern is linear in the text), into
*mentions* of actions (``bid 4``, ``nil``, ``Q♥``, ``queen of hearts``, ``keep``,
``trump hearts``...) within clauses (split at ``.!?;`` a new line, brackets and
contrast words such as *but*). Each mention is then:

- **negated**, and never the reading: after *not*, *no*, *never*, *don't*, *rather
  than*, *instead of*, ... (within a few words, the words of a list included), or
  before *would be a mistake*, *is too risky*, *is wrong*, ...;
- **someone else's**, and not the reading: *partner bid 4*, *East's Q♥*;
- **asked** (its clause ends in ``?``): not the reading;
- **weighed** (its clause holds *if*, *maybe*, *could*, *or*, ...; a clause weighing
  two actions is itself an ambiguous mention);
- **committed** (*I'll bid 4*, *so I play Q♥*, or a clause that is the action alone);
- or **plain**.

One committed action, named after every other action the answer still holds, is the
reading; else, with no commitment, the one action all plain and weighed mentions
name. Anything else (two commitments, candidates left open, nothing) is not understood.
Prose words are never cards: ``As``, ``Ah``, ``Js`` count as cards only after a verb of
play (``play As``) or as the whole answer, and never in lower case.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    DRAW_DISCARD,
    DRAW_KEEP,
    MAX_BID,
    NAME_TRUMP,
    SEE_HAND,
    str_to_card,
)
from spades_env.state import BLIND, DRAW, EXCHANGE, PLAY, TRUMP

#: the reading's sentinels: several actions left open; a number that is no bid
AMBIGUOUS, INVALID = "ambiguous", "invalid"

_W = r"[^\W\d_]"  # a letter, in any language
_RANKS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "T", "jack": "J", "queen": "Q", "king": "K",
    "ace": "A", "knave": "J",
    "ess": "A", "kung": "K", "dam": "Q", "knekt": "J", "tia": "T",  # Swedish
    "ass": "A", "könig": "K", "dame": "Q", "bube": "J", "zehn": "T",  # German
    "as": "A", "rey": "K", "reina": "Q", "jota": "J", "sota": "J", "diez": "T",  # Spanish
    "roi": "K", "valet": "J", "dix": "T",  # French ("as", "dame" above)
}  # fmt: skip
_SUITS = {
    "spade": "S", "spades": "S", "heart": "H", "hearts": "H", "diamond": "D",
    "diamonds": "D", "club": "C", "clubs": "C",
    "spader": "S", "hjärter": "H", "ruter": "D", "klöver": "C",  # Swedish
    "pik": "S", "herz": "H", "karo": "D", "kreuz": "C",  # German
    "picas": "S", "pica": "S", "corazones": "H", "corazón": "H", "diamantes": "D",
    "tréboles": "C", "trébol": "C",  # Spanish
    "pique": "S", "piques": "S", "cœur": "H", "coeur": "H", "cœurs": "H", "coeurs": "H",
    "carreau": "D", "carreaux": "D", "trèfle": "C", "trèfles": "C", "trefle": "C",  # French
}  # fmt: skip
_SYMBOLS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "noll": 0, "ett": 1, "två": 2, "tre": 3, "fyra": 4, "fem": 5, "sju": 7, "åtta": 8,
    "nio": 9, "tio": 10, "elva": 11, "tolv": 12, "tretton": 13,  # Swedish ("sex": six)
    "null": 0, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12, "dreizehn": 13,
    "cero": 0, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
    "siete": 7, "ocho": 8, "nueve": 9, "diez": 10, "doce": 12, "trece": 13,  # Spanish
    "zéro": 0, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8,
    "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "treize": 13, "un": 1,  # French
}  # fmt: skip
_BID_WORDS = (
    r"bid|bids|bidding|bet|go|going|call|say|declare|contract|bjuder|bjuda|bjud|bud|budet"
    r"|biete|bieten|gebot|ansage|sage|apuesto|apuesta|apostar|canto|pido|annonce|annonces"
    r"|j'annonce|annoncer|mise|enchère|contrat|settle|choose|pick|opt"
)
_BID_FILL = r"(?:\s*[:=\-]?\s*(?:is|of|with|for|on|a|an|exactly|just|only|ist|es|est|de|är|blir|på|mit|con|avec|be|will|am|it|me|mein|mon|mi)\b)"  # noqa: E501
_NUM = r"-?\d+(?:[.,]\d+)?"
_PLAY_VERBS = (
    r"play|playing|lead|leading|throw|throwing|dump|dumping|discard|discarding|pass|passing"
    r"|give|giving|follow with|toss|spela|spelar|lägger|lägg|spiele|spielen|lege|ausspielen"
    r"|juego|jugar|juega|tiro|echo|joue|jouer|passe|passer|donne"
)
_ARTICLES = r"(?:the|my|a|an|den|det|die|der|das|el|la|le|l'|min|mitt|mein|meine|mi|ma|mon)"


def _alt(words: Any) -> str:
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


_RANK_ALT = r"10|[2-9]|[tjqka]|" + _alt(_RANKS)
_SUIT_ALT = _alt(_SUITS)
_DE_SV_SUITS = _alt(["spader", "hjärter", "ruter", "klöver", "pik", "herz", "karo", "kreuz"])
_DE_SV_RANKS = _alt(["ess", "kung", "dam", "knekt", "ass", "könig", "dame", "bube"])

#: one pattern, every kind of token; tried left to right at each place (linear time)
_TOKENS = re.compile(
    r"(?P<space>[^\S\n]+)"  # spaces, passed over at once
    r"|(?P<bn>\bblind[\s-]*nil\b)"
    r"|(?P<see>\b(?:meine\s+)?(?:karten|hand)\s+(?:ansehen|anschauen)\b|\b(?:see|seeing|look\s+at|looking\s+at|view|check|se\s+på|ver|voir)\s+(?:my\s+|the\s+|min\s+|mina\s+|meine\s+|mis\s+|mi\s+|ma\s+|mes\s+)?(?:hand|cards|kort|handen|karten|mano|cartas|main|cartes)\b|\bsee\s+hand\b)"
    rf"|(?P<cw>\b(?:{_RANK_ALT})\s+(?:of|de|i|av)\s+(?:the\s+)?(?:{_SUIT_ALT})\b)"
    rf"|(?P<cs>\b(?:{_DE_SV_SUITS})[\s-]?(?:{_DE_SV_RANKS}|10|[2-9])\b)"
    r"|(?P<jk>\b(?:big|little|small|grosser|großer|großen|grossen|kleiner|kleinen|stora|lilla)\s+joker\b)"
    r"|(?P<uc>(?<![\w.])(?:10|[2-9tjqka])\s?[♠♥♦♣](?![\w]))"
    r"|(?P<ac>(?<![\w'])(?:10|[2-9tjqka])[shdc](?![\w']))"
    r"|(?P<wj>(?<![\w'])[lb]j(?![\w']))"
    rf"|(?P<tr>\b(?:trumps?|trumf|trumpf|triunfo|atout|name|naming)\s*(?::\s*|is\s+|are\s+|suit\s+(?:is\s+)?|will\s+be\s+|as\s+|\s)(?:{_SUIT_ALT}|[♠♥♦♣]))"
    rf"|(?P<tr2>\b(?:{_SUIT_ALT}|[♠♥♦♣])\s+(?:are|is|as|as\s+the|will\s+be|blir|ist|sind|es|son|est|sont)\s+(?:trumps?|trumf|trumpf|triunfo|atout)\b)"
    rf"|(?P<bid>\b(?:{_BID_WORDS})\b{_BID_FILL}{{0,3}}\s*[:=]?\s*(?:(?P<bidn>{_NUM})|(?P<bidw>{_alt(_NUMBERS)})\b))"
    r"|(?P<bidr>(?<![\w.])(?P<bidrn>-?\d+)\s+(?:is|will\s+be)\s+(?:my|the|our)\s+(?:bid|call)\b)"
    r"|(?P<nil>\bnil\b|\bnill\b)"
    r"|(?P<keep>\b(?:keep|keeping|behåll|behålla|behåller|behalten|behalte|quedo|quedarme|quedar|garder|garde)\b)"
    r"|(?P<disc>\b(?:discard|discarding|kasta|kastar|ablegen|abwerfen|descartar|descarto|défausser|défausse|jeter)\b)"
    rf"|(?P<suit>\b(?:{_SUIT_ALT})\b|[♠♥♦♣])"
    rf"|(?P<num>(?<![\w.]){_NUM}(?![\w]))"
    rf"|(?P<word>{_W}+(?:'{_W}+)?)"
    r"|(?P<stop>[.!;\n()\[\]{}]|\?)"
    r"|(?P<comma>[,:])",
    re.IGNORECASE,
)

#: the words a pattern of `_TOKENS` other than a plain word may start with (and card
#: codes, `_may_lead`): any other word is a plain word, read without trying the patterns
_LEADS = (
    set(_RANKS) | set(_SUITS) | set(_NUMBERS) | set(_BID_WORDS.split("|"))
    | {"blind", "nil", "nill", "see", "seeing", "look", "looking", "view", "check", "se",
       "ver", "voir", "meine", "karten", "hand", "trump", "trumps", "trumf", "trumpf",
       "triunfo", "atout", "name", "naming", "big", "little", "small", "grosser", "großer",
       "großen", "grossen", "kleiner", "kleinen", "stora", "lilla", "keep", "keeping",
       "behåll", "behålla", "behåller", "behalten", "behalte", "quedo", "quedarme", "quedar",
       "garder", "garde", "discard", "discarding", "kasta", "kastar", "ablegen", "abwerfen",
       "descartar", "descarto", "défausser", "défausse", "jeter"}
)  # fmt: skip
_PLAIN = re.compile(
    rf"(?P<space>[^\S\n]+)|(?P<word>{_W}+(?:'{_W}+)?)|(?P<stop>[.!;\n()\[\]{{}}]|\?)"
    r"|(?P<comma>[,:])|(?P<skip>[*\"`_#>~|/\\=+&%$@^<'])"
)


def _may_lead(word: str) -> bool:
    """Whether a pattern other than a plain word may start at `word`: a lead word, or a
    card code (``Q`` of ``Q♥``, ``QH``, ``LJ``)."""
    return word in _LEADS or _CODE.fullmatch(word) is not None


_CODE = re.compile(r"[tjqka][shdc]?|[lb]j")


def _scan(text: str) -> Iterator[re.Match[str]]:
    """`_TOKENS.finditer(text)`, faster: a plain word that no other pattern may start
    with is taken at once."""
    pos, end = 0, len(text)
    while pos < end:
        m = _PLAIN.match(text, pos)
        if m is None or (m.lastgroup == "word" and _may_lead(m[0].lower())):
            m = _TOKENS.match(text, pos)
            if m is None:
                pos += 1
                continue
        elif m.lastgroup == "skip":  # no token starts with it
            pos += 1
            continue
        yield m
        pos = m.end()


_NEGATE_BEFORE = {
    "not", "no", "never", "don't", "dont", "won't", "wont", "wouldn't", "shouldn't",
    "can't", "cannot", "isn't", "avoid", "avoiding", "than", "without", "skip", "skipping",
    "against", "except", "refuse", "nor", "neither", "over", "beat", "beating",
    "inte", "ej", "aldrig", "inget", "ingen", "nicht", "kein", "keine", "keinen", "nie",
    "niemals", "statt", "anstatt", "nunca", "ni", "ne", "pas", "jamais", "sans",
    "plutôt", "istället", "hellre", "lugar", "vez", "instead", "save", "saving", "keeping",
    "but",
}  # fmt: skip
_NEGATE_AFTER = {
    "mistake", "mistakes", "risky", "risk", "bad", "wrong", "dangerous", "foolish",
    "unwise", "terrible", "worse", "weak", "not", "no", "never", "too", "silly",
    "pointless", "lose", "loses", "fail", "fails", "isn't", "wouldn't", "won't",
    "doesn't", "shouldn't", "can't", "cannot", "overbid", "greedy", "reckless", "poor",
    "misstag", "riskabel", "riskabelt", "dåligt", "dålig", "fel", "inte", "fehler",
    "riskant", "schlecht", "falsch", "nicht", "error", "arriesgado", "arriesgada", "malo",
    "mala", "erreur", "risqué", "risquée", "mauvais", "mauvaise", "pas", "trop", "zu",
    "för", "demasiado", "off", "insane", "crazy", "suicidal", "hopeless", "unrealistic",
    "impossible", "madness", "nuts", "foolhardy", "unlikely", "stupid", "absurd", "doomed",
    "unsafe", "unsound", "ridiculous", "out",
}  # fmt: skip
_HEDGE = {
    "if", "unless", "could", "might", "maybe", "perhaps", "possibly", "either", "or",
    "whether", "consider", "considering", "option", "options", "alternatively", "versus",
    "vs", "suppose", "candidates", "candidate", "eller", "kanske", "om", "oder",
    "vielleicht", "wenn", "falls", "quizás", "quizá", "tal", "si", "ou", "peut", "between",
    "torn", "unsure", "undecided", "debating", "wondering", "weighing", "mellan", "zwischen",
    "entre",
}  # fmt: skip
#: a clause that holds one of these is a condition: none of its actions is the reading
_CONDITION = {
    "if", "unless", "otherwise", "else", "when", "sonst", "annars", "sinon", "om", "wenn",
    "falls", "si",
}  # fmt: skip
_ORS = {"or", "either", "eller", "oder", "ou", "vs", "versus", "nor"}
_COMMIT = {
    "i'll", "ill", "will", "i'm", "im", "going", "go", "choose", "chose", "pick", "select",
    "decide", "decided", "decision", "settle", "opt", "let's", "lets", "final", "answer",
    "therefore", "so", "thus", "hence", "i'd", "stick", "playing", "bidding",
    "jag", "väljer", "därför", "ich", "wähle", "daher", "deshalb", "also", "je", "vais",
    "choisis", "donc", "alors", "yo", "voy", "elijo", "entonces", "mi", "mon", "ma",
    "mein", "meine", "min", "mitt", "svar", "antwort", "respuesta", "réponse",
}  # fmt: skip
_FILLER = {
    "i", "i'll", "ok", "okay", "so", "then", "my", "the", "a", "an", "it", "is", "it's",
    "its", "final", "answer", "action", "move", "choice", "decision", "go", "with", "for",
    "let's", "lets", "will", "me", "please", "tricks", "trick", "and", "that's", "yes",
    "sure", "alright", "well", "done", "card", "to", "now", "this", "time", "easy",
    "simple", "definitely", "clearly", "obviously", "jag", "ich", "yo", "je", "svar",
    "antwort", "respuesta", "réponse", "mein", "mon", "mi", "min", "bid", "play", "lead",
    "pass", "be", "here", "going", "am", "bud", "gebot", "apuesta", "enchère", "stich",
    "stiche", "stick", "bazas", "plis", "leads", "plays", "bids", "card's",
}  # fmt: skip
_OTHERS = {
    "north", "east", "south", "west", "partner", "partner's", "partners", "opponent",
    "opponents", "opponent's", "they", "he", "she", "lho", "rho", "we", "our", "us", "team",
    "total", "combined", "together", "everyone", "everybody", "their", "his", "her",
    "dealer", "nord", "öst", "syd", "väst", "partnern", "ost", "süd", "compañero",
    "compañera", "partenaire", "adversaire", "gegner", "motståndare", "rival", "rivales",
    "norte", "este", "sur", "oeste", "est", "sud", "ouest", "north's", "east's",
    "south's", "west's", "theirs",
}  # fmt: skip
_LINK = {
    "is", "'s", "would", "will", "seems", "looks", "sounds", "feels", "be", "was", "are",
    "here", "now", "could", "might", "may", "just", "really", "isn't", "wouldn't",
    "doesn't", "won't", "ist", "wäre", "scheint", "är", "vore", "verkar", "blir", "es",
    "sería", "parece", "est", "serait", "semble", "seem", "simply", "alone", "by", "in",
    "this", "at", "has", "then", "also", "right", "there",
}  # fmt: skip
_TO_OTHERS = {"give", "pass", "to", "send", "ger", "gebe", "doy", "donne", "for", "with"}
_CONCLUDE = {"so", "therefore", "thus", "hence", "then", "say", "så", "also", "donc", "entonces"}
_WOULD = {"i'd", "would", "was", "were", "tempted", "wanted", "could", "might", "should"}
_ALL_BUT = {"anything", "everything", "all", "any", "whatever", "nothing"}
_CONTRAST = {
    "but", "however", "although", "though", "yet", "whereas", "men", "aber", "jedoch",
    "pero", "mais", "cependant", "sondern", "utan", "sino",
}  # fmt: skip
_ARTICLE_SET = {"the", "my", "a", "an", "den", "det", "die", "der", "das", "el", "la", "le"}
_ARTICLE_SET |= {"l'", "min", "mitt", "mein", "meine", "mi", "ma", "mon"}
_FOLLOW_OK = {"and", "or", "then", "since", "because", "now", "here", "to", "it", "this"}
_FOLLOW_OK |= {"first", "next", "please", "now", "as", "for", "which", "that"}
_PLAY_VERB_SET = set(_PLAY_VERBS.replace("follow with|", "").split("|")) | {"with"}


@dataclass
class Mention:
    """One action named in an answer."""

    pos: int  # token index
    action: Any  # an action, ("bid", n) past the largest bid, AMBIGUOUS or INVALID
    kind: str  # "bid", "card", "draw", "trump"
    status: str = "plain"  # "plain", "committed", "weighed"
    weak: bool = False  # a two-letter card code (As, QH): read only where a card is meant
    verb: bool = False  # led by a verb of play (``play As``)


def _card(rank: str, suit: str) -> int:
    return str_to_card(rank.upper().replace("10", "T") + suit)


def _bid(raw: str) -> Any:
    """A bid number as written -> the bid, ``("bid", n)`` past the largest bid, or
    INVALID (negative, a fraction, three or more digits)."""
    if raw.startswith("-") or "." in raw or "," in raw or len(raw) > 2:
        return INVALID
    n = int(raw)
    return BID_BASE + n if n <= MAX_BID else ("bid", n)


def _tokens(text: str) -> list[tuple[str, str, Any]]:
    """(kind, lower-case text, value) per token; a mention's value is its Mention."""
    out: list[tuple[str, str, Any]] = []
    for m in _scan(text):
        kind, raw = m.lastgroup, m[0]
        if kind == "space":
            continue
        low = raw.lower()
        if kind in ("word", "stop", "comma"):
            out.append((kind, low, None))
            continue
        value: Any = None
        weak = False
        if kind == "bn":
            value, family = BLIND_NIL, "bid"
        elif kind == "see":
            value, family = SEE_HAND, "bid"
        elif kind == "cw":
            parts = re.split(r"\s+", low)
            value, family = _card(_RANKS.get(parts[0], parts[0]), _SUITS[parts[-1]]), "card"
        elif kind == "cs":
            parts = re.fullmatch(rf"({_DE_SV_SUITS})[\s-]?(.+)", low)
            assert parts is not None
            value, family = _card(_RANKS.get(parts[2], parts[2]), _SUITS[parts[1]]), "card"
        elif kind == "jk":
            value, family = str_to_card("BJ" if low[0] in "bgs" else "LJ"), "card"
        elif kind == "uc":
            value, family = _card(low[:-1].strip(), _SYMBOLS[low[-1]]), "card"
        elif kind == "ac":
            # a letter rank in lower case is a word (as, ah, js), never a card
            if raw[0].isalpha() and not raw[0].isupper():
                out.append(("word", low, None))
                continue
            value, family, weak = _card(low[:-1], low[-1].upper()), "card", True
        elif kind == "wj":
            if not raw.isupper():
                out.append(("word", low, None))
                continue
            value, family, weak = str_to_card(raw.upper()), "card", True
        elif kind in ("tr", "tr2", "suit"):
            found = re.search(_SUIT_ALT + r"|[♠♥♦♣]", low)
            assert found is not None
            suit = _SYMBOLS.get(found[0]) or _SUITS[found[0]]
            value, family = NAME_TRUMP + "SHDC".index(suit), "trump"
            if kind == "suit":
                out.append(("suit", low, Mention(0, value, family)))
                continue
        elif kind == "bid":
            value = _bid(m["bidn"]) if m["bidn"] else BID_BASE + _NUMBERS[m["bidw"].lower()]
            family = "bid"
        elif kind == "bidr":
            value, family = _bid(m["bidrn"]), "bid"
        elif kind == "nil":
            value, family = BID_BASE, "bid"
        elif kind == "keep":
            value, family = DRAW_KEEP, "draw"
        elif kind == "disc":
            out.append(("disc", low, Mention(0, DRAW_DISCARD, "draw")))
            continue
        else:  # num
            out.append(("num", low, None))
            continue
        out.append(("mention", low, Mention(0, value, family, weak=weak)))
    return out


def _clauses(tokens: list[tuple[str, str, Any]]) -> list[tuple[list[int], bool, bool]]:
    """Token indices per clause, whether the clause is a question, and whether a contrast
    (*but*, *however*) follows it."""
    out: list[tuple[list[int], bool, bool]] = []
    cur: list[int] = []
    for i, (kind, low, _) in enumerate(tokens):
        # "anything but the A♠" rejects the A♠: no new clause
        but_of = low == "but" and bool(cur) and tokens[cur[-1]][1] in _ALL_BUT
        if kind == "stop" or (kind == "word" and low in _CONTRAST and not but_of):
            if cur:
                out.append((cur, low == "?", kind == "word"))
            cur = []
            continue
        cur.append(i)
    if cur:
        out.append((cur, False, False))
    return out


def _words_before(tokens: list, idx: list[int], at: int, n: int) -> list[str]:
    """The `n` tokens' words before clause position `at` (mentions as '#')."""
    out = []
    for j in idx[max(0, at - n) : at]:
        kind, low, _ = tokens[j]
        out.append(low if kind in ("word", "comma", "disc") else "#")
    return out


def _mentions(text: str, phase: int, whole: bool) -> list[Mention]:
    """The mentions of `text` that may be the reading, each with its status (negated,
    asked and someone else's left out). `whole`: the text is the whole reading (a
    tag's content, or a short answer), where a bare number is a bid and a card code a
    card."""
    tokens = _tokens(text)
    clauses = _clauses(tokens)
    alone = whole or len(clauses) == 1  # a clause that is the whole reading
    out: list[Mention] = []
    for idx, question, conceded in clauses:
        found: list[tuple[int, Mention]] = []  # (clause position, mention)
        for at, j in enumerate(idx):
            kind, low, value = tokens[j]
            before = _words_before(tokens, idx, at, 2)
            if kind == "mention":
                m = Mention(j, value.action, value.kind, weak=value.weak)
                prev = [w for w in before if w not in _ARTICLE_SET]
                m.verb = bool(prev) and prev[-1] in _PLAY_VERB_SET
                found.append((at, m))
            elif kind == "num" and phase not in (PLAY, EXCHANGE):
                found.append((at, Mention(j, _bid(low), "bid", weak=True)))
            elif kind == "word" and low in _NUMBERS and phase not in (PLAY, EXCHANGE):
                found.append((at, Mention(j, BID_BASE + _NUMBERS[low], "bid", weak=True)))
            elif kind == "suit" and phase == TRUMP:
                found.append((at, Mention(j, value.action, "trump")))
            elif kind == "disc":
                found.append((at, Mention(j, value.action, "draw")))
        if not found:
            continue
        at_mention = {m.pos for _, m in found}
        plain_words = [tokens[j][1] for j in idx if tokens[j][0] == "word" and j not in at_mention]
        terse = all(w in _FILLER or w in _COMMIT for w in plain_words)
        hedged = any(w in _HEDGE for w in plain_words)
        keep: list[tuple[int, Mention]] = []
        open_number = False  # a bare number left out of a clause that weighs candidates
        for at, m in found:
            if m.kind == "bid" and m.weak:
                if not (terse or _closing_number(tokens, idx, at)):
                    open_number |= hedged
                    continue  # a bare number in prose counts something else
            elif m.weak and not (m.verb and _follow_ok(tokens, idx, at)) and not (terse and alone):
                continue  # As, Ah, Js: a card only after a verb of play or alone
            if _others(tokens, idx, at):
                continue
            if _negated(tokens, idx, at, found):
                if phase == BLIND and m.action == BLIND_NIL:
                    keep.append((at, Mention(m.pos, SEE_HAND, "bid")))  # declines it
                continue
            keep.append((at, m))
        if question or not keep or _CONDITION & set(plain_words):
            continue
        if conceded and _WOULD & set(plain_words):
            continue  # "I'd go nil, but ...": what would be, not what is
        distinct = {m.action for _, m in keep}
        words_here = {tokens[j][1] for j in idx if tokens[j][0] == "word"}
        if words_here & _ORS or (hedged and (len(distinct) > 1 or open_number)):
            keep.append((keep[-1][0], Mention(keep[-1][1].pos, AMBIGUOUS, keep[-1][1].kind)))
        for at, m in keep:
            if hedged or m.action == AMBIGUOUS:
                m.status = "weighed"
            elif terse or any(w in _COMMIT for w in _words_before(tokens, idx, at, 6)):
                m.status = "committed"
            out.append(m)
    return out


def _closing_number(tokens: list, idx: list[int], at: int) -> bool:
    """A bare number that closes its clause after a colon or a word of conclusion
    (``partner needs help: 3``, ``..., so 3``) is the answer."""
    if at + 1 != len(idx) or at == 0:
        return False
    kind, low, _ = tokens[idx[at - 1]]
    return (kind == "comma" and low == ":") or low in _CONCLUDE


def _follow_ok(tokens: list, idx: list[int], at: int) -> bool:
    """A weak card code is a card only if no ordinary word follows it (``play As low``
    is no card)."""
    if at + 1 >= len(idx):
        return True
    kind, low, _ = tokens[idx[at + 1]]
    return kind != "word" or low in _FOLLOW_OK


def _others(tokens: list, idx: list[int], at: int) -> bool:
    """Someone else's action (``partner bid 4``, ``East's Q♥``)."""
    before = _words_before(tokens, idx, at, 4)
    for k, w in enumerate(before):
        if w in _OTHERS and not ({"i", "i'll", "i'm", "my", "me", "#"} & set(before[k + 1 :])):
            return k == 0 or before[k - 1] not in _TO_OTHERS  # "give partner the 2♣" is mine
    return False


def _negated(tokens: list, idx: list[int], at: int, found: list) -> bool:
    """Whether a negation governs the mention at clause position `at`: a negation word
    within 5 words before it (through a list of mentions: ``not nil or 4``), or a word of
    rejection within 6 words after it."""
    k = at - 1
    steps = 0
    while k >= max(0, at - 12) and steps < 5:  # a few words back, lists of mentions included
        kind, low, _ = tokens[idx[k]]
        if kind == "comma":  # no further, but "not, in my view, nil"
            before = tokens[idx[k - 1]][1] if k >= 1 else ""
            return low == "," and before in _NEGATE_BEFORE and before != "no"
        if kind in ("word", "mention", "disc") and low in _NEGATE_BEFORE:
            # "No, ..." alone is an interjection, not a negation of what follows
            return not (k + 1 < len(idx) and tokens[idx[k + 1]][1] == "," and low == "no")
        if kind in ("mention", "suit", "num", "disc"):
            between = [tokens[idx[q]][1] for q in range(k + 1, at)]
            if not all(w in ("and", "or", "nor", "&") or w in _ARTICLE_SET for w in between):
                break
        steps += kind == "word"
        k -= 1
    # a rejection follows as a predicate: "nil would be a mistake", "nil is too risky",
    # or after a comma or colon: "nil, not a chance" (but "3, not nil" rejects nil)
    j = idx[at] + 1
    if j < len(tokens) and tokens[j][0] == "comma":
        j += 1
        if j < len(tokens) and (tokens[j][1] in _NEGATE_AFTER or tokens[j][1].endswith("n't")):
            after = [k for k, _, _ in tokens[j + 1 : j + 4]]
            return not ({"mention", "suit", "num", "disc"} & set(after))
        return False
    if j >= len(tokens) or not (tokens[j][1] in _LINK or tokens[j][1] in _NEGATE_AFTER):
        return False
    for kind, low, _ in tokens[j : j + 10]:
        if kind in ("stop", "comma", "mention", "suit", "disc"):
            break
        if kind == "word" and (low in _NEGATE_AFTER or low.endswith("n't")):
            return True
    return False


def commitment(text: str, phase: int, whole: bool, held: set[int] | None) -> Any:
    """The one action `text` commits to in `phase` (see the module doc): an action,
    ``("bid", n)``, AMBIGUOUS, INVALID, or None for none."""
    mentions = _mentions(text, phase, whole)
    family = {PLAY: "card", EXCHANGE: "card", DRAW: "draw", TRUMP: "trump"}.get(phase, "bid")
    own = [m for m in mentions if m.kind == family or m.action == AMBIGUOUS]
    use = own if any(m.action != AMBIGUOUS for m in own) else mentions
    if held is not None and family == "card":  # a card not held, only thought of
        use = [
            m
            for m in use
            if m.status == "committed"
            or m.kind != "card"
            or m.action in held
            or not isinstance(m.action, int)
        ]
    if not use:
        return None
    committed = [m for m in use if m.status == "committed"]
    if committed:
        actions = {m.action for m in committed}
        if len(actions) > 1:
            return AMBIGUOUS
        action = actions.pop()
        last = max(m.pos for m in committed)
        if any(m.action != action and m.pos > last for m in use):
            return AMBIGUOUS
        return action
    actions = {m.action for m in use}
    return actions.pop() if len(actions) == 1 else AMBIGUOUS
