"""The heuristic agent's bidding: blind nil, nil, the bid, and the blind-nil exchange.

Follows rule text 000 "Så bjuder och spelar den som vill vinna":

- "Räkna stick i budet": every ace is a trick, the A♠ a certain one; a king with at least
  one small card beside it counts half; five or more spades add their length.
- "Dra av för ensamma bilder": a lone queen or jack counts nothing.
- "Bjud lite lågt – men inte för lågt": bid a little under the count, but bid up when the
  team's bags are near the penalty.
- "Noll-budet": bid nil on a hand of low cards with no high spades and no lone king.
- "Blint noll": a desperate rescue, only when it is allowed and the team is far behind.
- RULES.md §2 blind_nil_exchange: the nil bidder passes its dangerous cards, the partner
  its low ones.
- RULES.md §6 auction (the highest bidder names trump): count the hand with its best
  trump suit (length and honours, `best_trump`) when the bid would be the highest so
  far, since I would name that suit; otherwise count it with one of the other suits as
  trump, and judge a nil against every suit as trump. Name the best trump suit.

Each function returns `(value, reason)`; the reason names the rule that decided.
"""

from __future__ import annotations

import math

from agents.heuristic.seat_table import SUIT_BITS, SUIT_OF, Table, cards, highest
from spades_env.cards import (
    BLIND_NIL,
    CARD_RANK,
    NAME_TRUMP,
    NUM_RANKS,
    NUM_SUITS,
    SEE_HAND,
    SPADES,
    SUIT_NAMES,
)

ACE, KING, QUEEN, JACK, TEN = 12, 11, 10, 9, 8
RANK_OF: list[int] = [int(r) for r in CARD_RANK]


def suit_ranks(hand: int, suit: int) -> list[int]:
    """Ranks held in a suit, highest first (jokers rank 13 and 14)."""
    return sorted(
        (c - suit * NUM_RANKS if c < 52 else c - 39 for c in cards(hand & SUIT_BITS[suit])),
        reverse=True,
    )


def side_suit_tricks(ranks: list[int]) -> float:
    """Tricks expected from one non-spade suit (ranks highest first)."""
    n = len(ranks)
    held = set(ranks)
    t = 0.0
    if ACE in held:
        # rule text 000 "Räkna stick i budet": every ace is a trick (long suits get trumped).
        t += 1.0 if n <= 6 else 0.5
    if KING in held and n >= 2:
        # rule text 000: a king with a small card beside it counts half; behind the ace, more.
        t += (0.9 if n <= 5 else 0.4) if ACE in held else 0.5
    if QUEEN in held and n >= 3 and (ACE in held or KING in held):
        t += 0.25  # a supported queen; rule text 000 "Dra av för ensamma bilder": never a lone one
    return t


def spade_values(ranks: list[int]) -> list[float]:
    """The tricks each spade is worth (ranks highest first), before the ruffs.

    A spade with `k` higher spades out wins once those fall, if it has `k` small spades
    to wait with; the A♠ (k = 0) is certain (rule text 000: "spader ess som ett självklart
    sådant"), a king with a small card beside it nearly so.
    """
    n = len(ranks)
    values = []
    for i, r in enumerate(ranks):
        k = (ACE - r) - i  # higher spades I do not hold (a joker: none)
        guards = n - 1 - i
        values.append(1.0 if k <= 0 else _GUARDED.get(k, 0.3) if k <= guards else 0.3)
    # rule text 000 "Lägg sedan till spaderlängden": with five or more spades the others run
    # out and the low trumps take tricks at the end.
    for i in range(max(0, n - 4)):
        values[n - 1 - i] = max(values[n - 1 - i], 0.75)
    return values


def ruff_cap(values: list[float]) -> float:
    """The most the short side suits add: spare low spades ruff them ("Spara spadern
    till rätt stick"), 0.3 a spade beyond the first."""
    spare = sum(1 for v in values if v < 0.75)
    return 0.3 * max(0, spare - 1)


def spade_tricks(ranks: list[int], shortness: float) -> float:
    """Tricks expected from the spades (ranks highest first): honours, length and ruffs."""
    values = spade_values(ranks)
    return sum(values) + min(shortness, ruff_cap(values))


#: value of a spade with k higher spades out and at least k small ones to wait with
_GUARDED = {1: 0.85, 2: 0.6, 3: 0.4}


def estimate_tricks(hand: int, trump: int = SPADES) -> float:
    """Rule text 000 "Räkna stick i budet": the tricks this hand should take with `trump` as
    trump (spades; RULES.md §6 auction: any suit, counted as rule text 000 counts spades)."""
    hand = int(hand)
    shortness = 0.0
    total = 0.0
    for s in range(NUM_SUITS):
        if s == trump:
            continue
        ranks = suit_ranks(hand, s)
        total += side_suit_tricks(ranks)
        shortness += {0: 0.6, 1: 0.3, 2: 0.1}.get(len(ranks), 0.0)
    return total + spade_tricks(suit_ranks(hand, trump), shortness)


#: RULES.md §6 auction: what an honour adds to a suit's length as a trump suit.
_HONOUR_VALUE = {ACE: 1.0, KING: 0.75, QUEEN: 0.5, JACK: 0.25}


def trump_value(hand: int, suit: int) -> float:
    """RULES.md §6 auction: a suit's worth as trump: its length plus its honours."""
    ranks = suit_ranks(int(hand), suit)
    return len(ranks) + sum(_HONOUR_VALUE.get(r, 0.0) for r in ranks)


def best_trump(hand: int) -> int:
    """The suit with the best trump value (spades first among equals, then hearts...)."""
    return max(range(NUM_SUITS), key=lambda s: (trump_value(hand, s), -s))


def spade_nil_danger(spades: list[int]) -> float | None:
    """The trump suit's part of `nil_danger` (ranks highest first); None: hopeless."""
    # rule text 000 "Noll-budet": no high spades; a long spade holding cannot all be ducked.
    if spades and spades[0] >= JACK:
        return None
    return max(0, len(spades) - 2) * 0.35 + sum(0.05 * r for r in spades)


def side_nil_dangers(ranks: list[int]) -> list[float] | None:
    """A side suit's additions to `nil_danger`, in the order they are added (ranks
    highest first); None: the suit makes the nil hopeless."""
    if ranks and ranks[0] == ACE:
        return None  # an ace is a trick
    out = []
    for i, r in enumerate(ranks):
        cover = len(ranks) - i - 1  # low cards under this one to duck with
        if r == KING and cover < 3:
            return None  # rule text 000: "En ensam kung i en färg är däremot en fälla"
        if r >= TEN:
            out.append(max(0.0, (r - 7) * 0.12 - cover * 0.1))
    return out


def nil_danger(hand: int, trump: int = SPADES) -> float:
    """How likely a hand is to be forced to win a trick (0: safe; >= 1: hopeless), with
    `trump` as trump (RULES.md §6 auction: any suit)."""
    danger = spade_nil_danger(suit_ranks(hand, trump))
    if danger is None:
        return 9.0
    for s in range(NUM_SUITS):
        if s == trump:
            continue
        adds = side_nil_dangers(suit_ranks(hand, s))
        if adds is None:
            return 9.0
        for d in adds:
            danger += d
    return danger


def choose_blind(t: Table, blind_deficit: int) -> tuple[int, str]:
    """BLIND phase: the action BLIND_NIL or SEE_HAND, and why."""
    if t.legal & 0b01 == 0:  # bit 0 = BLIND_NIL, bit 1 = SEE_HAND (engine.PHASE_BASE)
        return SEE_HAND, "blind nil not offered: see the hand"
    own = t.scores[t.team]
    opp = max(sc for u, sc in enumerate(t.scores) if u != t.team)  # RULES.md §6: the leader
    target = t.rules.target
    partner_bid = t.bids[t.partner]
    late = opp >= target * 0.6 or opp >= target - 150
    if (
        opp - own >= blind_deficit
        and late
        and partner_bid != 0
        and (partner_bid < 0 or partner_bid >= 3)
    ):
        return BLIND_NIL, (
            f'rule text 000 "Blint noll": {opp - own} behind and the opponents near {target}, '
            "a desperate rescue"
        )
    return SEE_HAND, (
        'rule text 000 "Blint noll" is a desperate rescue, not needed here: see the hand'
    )


#: RULES.md §6 auction: a trump suit that would make my nil hopeless counts this much in
#: the mean danger over the four suits (it is named one time in four, not always).
_HOPELESS = 3.0


def auction_estimate(t: Table, shade: float) -> tuple[float, float, str]:
    """RULES.md §6 auction, before trump is named: (tricks, nil danger, reason).

    If the hand's bid with its best trump suit would top every bid made so far, I would
    name that suit (a later bidder must bid more to take it away: four in five times I
    keep it unless I bid last); otherwise someone else names, likely a suit I am short
    in, so the hand is counted with the mean of its other suits as trump. A nil is
    judged against every suit as trump (its mean danger, a hopeless suit capped at
    `_HOPELESS`): the nil bidder never names.
    """
    hand, best = t.hand, best_trump(t.hand)
    named = estimate_tricks(hand, best)
    other = sum(estimate_tricks(hand, s) for s in range(NUM_SUITS) if s != best) / 3
    danger = sum(min(nil_danger(hand, s), _HOPELESS) for s in range(NUM_SUITS)) / NUM_SUITS
    made = [b for s, b in enumerate(t.bids) if s != t.seat and b >= 0]
    if math.floor(named + 0.5 - shade) > max(made, default=-1):
        keep = 1.0 if len(made) == t.players - 1 else 0.8
        est = keep * named + (1 - keep) * other
        why = f"{named:.1f} tricks with {SUIT_NAMES[best]} as trump, which I would name"
    else:
        est = other
        why = f"outbid: {other:.1f} tricks with another suit as trump"
    return est, danger, f"RULES.md §6 auction: {why}"


def choose_bid(t: Table, aggression: float, nil_risk: float) -> tuple[int, str]:
    """BID phase: the bid (0 = nil) and why."""
    hand = t.hand
    top = highest(t.legal)  # legal bits are bids 0..top
    if top < 1:
        return 0, "RULES.md §2 max_total_bid: no bid above nil is left"
    # rule text 000 "Bjud lite lågt": the count already runs about half a trick under what the
    # hand takes (measured in self-play); a quarter trick more shading bids a little low,
    # never far too low.
    shade = 0.25 - aggression
    if t.rules.trump == "named" and t.trump < 0:
        est, danger, reason = auction_estimate(t, shade)
    else:
        est, danger = estimate_tricks(hand, max(t.trump, 0)), nil_danger(hand, max(t.trump, 0))
        reason = f'rule text 000 "Räkna stick i budet": {est:.1f} tricks'
    partner_bid = t.bids[t.partner]
    # rule text 000 "Noll-budet": low cards, no high spades, no lone king; and never beside a
    # partner's nil ("Kan båda i laget bjuda noll? ... Klokt är det sällan").
    limit = 1.2 + nil_risk + (0.3 if partner_bid >= 4 else 0.0)
    if partner_bid != 0 and est < 1.8 and danger < limit and t.rules.nil_value > 0:
        return 0, 'rule text 000 "Noll-budet": low cards, no high spades, no lone king: nil'
    team_bags = t.bags[t.team]
    if team_bags >= t.rules.bag_limit - 3:
        # rule text 000 "Har ni redan sju säckar ... bjuda offensivt".
        shade -= 0.5
        reason += f"; {team_bags} bags: bid up"
    bid = math.floor(est + 0.5 - shade)
    known = [b for s, b in enumerate(t.bids) if s != t.seat and b > 0]
    total = sum(known) + bid
    if total > t.rules.hand_size:
        # Use the bids already made: 13 tricks cannot all be promised twice over.
        bid -= (total - t.rules.hand_size) // 3
        reason += f"; bids total {total} > {t.rules.hand_size}: bid less"
    elif sum(1 for b in t.bids if b >= 0) == t.players - 1 and total <= 10 and est - bid >= 0.3:
        # Last to bid with loose tricks on the table: they would only become bags.
        bid += 1
        reason += f"; bids total only {total}: take up a loose trick"
    bid = max(1, min(bid, top))  # a bid of 0 would be nil
    if partner_bid == 0:
        reason += "; partner bid nil: I cover"
    return bid, reason


def choose_trump(t: Table) -> tuple[int, str]:
    """TRUMP phase (RULES.md §6 auction): name the suit with the best trump value."""
    suit = best_trump(t.hand)
    n = (t.hand & SUIT_BITS[suit]).bit_count()
    return NAME_TRUMP + suit, (
        f"RULES.md §6 auction: name {SUIT_NAMES[suit]} trump, my best trump suit "
        f"({n} cards, length and honours {trump_value(t.hand, suit):.2f})"
    )


def choose_pass(t: Table) -> tuple[int, str]:
    """EXCHANGE phase: the card to pass to the partner (RULES.md §2 blind_nil_exchange)."""
    legal = cards(t.legal)
    if t.bids[t.seat] == 0:
        # rule text 000 "Blint noll": "skicka bort ett farligt ess": high cards, spades first.
        card = max(legal, key=lambda c: (RANK_OF[c] + (3 if SUIT_OF[c] == t.trump else 0), c))
        return card, 'rule text 000 "Blint noll": pass away a dangerous high card'
    # Partner bid blind nil: give low cards to duck with, keep the high ones to cover.
    card = min(legal, key=lambda c: (RANK_OF[c], SUIT_OF[c] == t.trump, c))
    return card, "partner bid blind nil: pass a low card to duck with"
