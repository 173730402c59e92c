"""The heuristic agent's card play: one card per decision, with the rule that chose it.

The rules come from seed 000 ("Så bjuder och spelar den som vill vinna", "Så täcker
partnern ett noll-bud", "Spara spadern till rätt stick", "Räkna spadern", "Bet") and
the whist-family maxims issue 4 names ("second hand low", "third hand high enough",
"win cheaply"). In order of priority:

1. I bid nil: never win a trick (`play_nil`).
2. Partner bid nil: protect it (`protect_nil`): cash high cards early, overtake the
   partner's card, lead suits the partner is void in.
3. An opponent bid nil: set it (`set_nil`): lead low toward the nil bidder and never
   overtake a nil bidder's card.
4. Otherwise play for the contract (`play_contract`): take tricks while the team needs
   them (second hand low, third hand high enough, win cheaply, trump when void, keep
   trumps for the right trick, draw trumps with long spades); duck once the contract is
   safe, to avoid bags; when the contract is lost, feed bags to the opponents.

"Spades" above means the trump: spades, or in RULES.md §6 auction the named suit
(`Table.trump`), which takes every role spades have here.

`choose_card(t)` returns `(card, reason)`; the reason quotes the rule.
"""

from __future__ import annotations

from agents.card_tracking import SUIT_BITS, SUIT_OF, Table, above, beats, cards
from spades_env.cards import CARD_RANK

RANK: list[int] = [int(r) for r in CARD_RANK]
Choice = tuple[int, str]


# ----------------------------------------------------------------------------- helpers
def low(t: Table, cs: list[int]) -> int:
    """The lowest card, a non-trump before a trump of the same rank."""
    return min(cs, key=lambda c: (RANK[c], SUIT_OF[c] == t.trump, c))


def high(t: Table, cs: list[int]) -> int:
    return max(cs, key=lambda c: (RANK[c], SUIT_OF[c] == t.trump, c))


def side(t: Table, cs: list[int]) -> list[int]:
    """The non-trumps (non-spades unless another suit is named) among `cs`, or all."""
    out = [c for c in cs if SUIT_OF[c] != t.trump]
    return out or cs


def suit_len(t: Table, suit: int) -> int:
    return (t.hand & SUIT_BITS[suit]).bit_count()


def higher_out(t: Table, card: int) -> int:
    """Unseen cards of the suit that outrank `card` (0: it is the master)."""
    return (t.unseen & above(card)).bit_count()


def danger_key(t: Table, card: int) -> tuple[int, int]:
    """Sorts cards by how likely they are to win a trick later (most dangerous last)."""
    return (-higher_out(t, card), RANK[card])


def losers(t: Table, legal: list[int]) -> list[int]:
    """Legal cards that cannot win the trick now (below the card winning it)."""
    _, best = t.winner()
    if best < 0:
        return []
    return [c for c in legal if not beats(c, best, t.lead_suit, t.trump)]


def discard_low(t: Table, legal: list[int]) -> Choice:
    """Throw the least useful card: no spade, no master, from the shortest side suit."""
    pool = side(t, legal)
    card = min(pool, key=lambda c: (t.is_master(c), RANK[c], suit_len(t, SUIT_OF[c])))
    return card, 'seed 000 "Spara spadern till rätt stick": discard a worthless low card'


def duck(t: Table, legal: list[int], why: str) -> Choice:
    """Lose the trick with the most dangerous card that still loses (sheds future winners)."""
    if t.trick_size == 0:
        # Lead the card most certain to be beaten: many unseen cards above it, no spade.
        card = max(side(t, legal), key=lambda c: (higher_out(t, c), -RANK[c]))
        return card, f"{why}: lead my lowest card"
    lose = losers(t, legal)
    if lose:
        non_spade = [c for c in lose if SUIT_OF[c] != t.trump] or lose
        return max(non_spade, key=lambda c: danger_key(t, c)), f"{why}: play the highest loser"
    if t.later_seats():
        return low(t, legal), f"{why}: play low, someone may still overtake"
    return high(t, legal), f"{why}: the trick is mine anyway, shed my highest card"


# ----------------------------------------------------------------------------- nil
def play_nil(t: Table, legal: list[int]) -> Choice:
    """seed 000 "Noll-budet": I promised no trick; duck every trick."""
    why = 'seed 000 "Noll-budet": take no trick'
    if t.trick_size == 0:
        # Lead a card sure to be beaten, from the suit whose top card is safest: leading
        # the low card of a short suit would leave its high card bare.
        def key(c: int) -> tuple[int, int, int]:
            top = t.hand & SUIT_BITS[SUIT_OF[c]]
            return (min(higher_out(t, c), 3), higher_out(t, top.bit_length() - 1), -RANK[c])

        return max(side(t, legal), key=key), f"{why}: lead a low card from my safest suit"
    lose = losers(t, legal)
    if lose:
        if SUIT_OF[lose[0]] != t.lead_suit:
            # Void: throw the card most likely to win a trick later (a high side card).
            pool = side(t, lose)
            return max(pool, key=lambda c: danger_key(t, c)), f"{why}: void, shed a danger card"
        return max(lose, key=lambda c: RANK[c]), f"{why}: highest card under the winner"
    if t.later_seats():
        return low(t, legal), f"{why}: play low and hope to be overtaken"
    return high(t, legal), f"{why}: forced to win; shed my highest card"


def protect_nil(t: Table, legal: list[int]) -> Choice:
    """seed 000 "Så täcker partnern ett noll-bud": take the tricks myself."""
    why = 'seed 000 "Så täcker partnern ett noll-bud"'
    p = t.partner
    if t.trick_size == 0:
        # "Spela också ut färger där partnern är kort": partner discards instead.
        void = [c for c in legal if t.voids[p] >> SUIT_OF[c] & 1 and SUIT_OF[c] != t.trump]
        if void:
            return high(t, void), f"{why}: lead a suit the partner is void in"
        # "Spela dina höga kort tidigt": cash masters while the partner can still unload.
        masters = [c for c in legal if t.is_master(c)]
        if masters:
            return high(t, side(t, masters)), f"{why}: cash a high card early"
        # Lead high so the partner can play under it.
        return high(t, side(t, legal)), f"{why}: lead high so the partner can duck"
    seat, _ = t.winner()
    win = t.winning(legal)
    if seat == p:
        if win:
            # "Lägg alltid över partnerns kort när du kan".
            return low(t, win), f"{why}: overtake the partner's card"
        return low(t, legal), f"{why}: cannot overtake the partner"
    if p in t.later_seats():
        if win:
            sure = [c for c in win if t.sure_win(c)]
            if sure:
                return low(t, sure), f"{why}: win it surely so the partner can duck"
            return high(t, win), f"{why}: play high so the partner can duck under"
        return low(t, legal), f"{why}: cannot win it, play low"
    return play_contract(t, legal)


def set_nil(t: Table, legal: list[int], nils: list[int]) -> Choice | None:
    """Set an opponent's nil: lead low toward it, never overtake its card."""
    why = "set the opponents' nil"
    if t.trick_size == 0:
        # Lead low toward the nil bidder, in a suit it still holds.
        pool = [c for c in legal if not any(t.voids[n] >> SUIT_OF[c] & 1 for n in nils)]
        pool = side(t, pool) if pool else []
        if not pool:
            return None
        card = min(pool, key=lambda c: (RANK[c], c))
        if RANK[card] > 7:
            return None  # no low card to lead: play for the contract
        return card, f"{why}: lead low toward the nil bidder"
    seat, _ = t.winner()
    if seat in nils:
        # Don't overtake a nil bidder's card.
        lose = losers(t, legal)
        if lose:
            return max(lose, key=lambda c: RANK[c]), f"{why}: do not overtake the nil bidder"
        return low(t, legal), f"{why}: forced over the nil bidder, as low as I can"
    if any(n in t.later_seats() for n in nils) and seat != t.partner:
        # The nil bidder plays after me: keep the trick low so it may be forced to win.
        follow = [c for c in legal if SUIT_OF[c] == t.lead_suit]
        if follow:
            return low(t, follow), f"{why}: play low, leave the nil bidder room to win"
    return None


# ----------------------------------------------------------------------------- contract
def play_contract(t: Table, legal: list[int]) -> Choice:
    """Play for the team's contract: take, duck, or feed bags (see the module docstring)."""
    need = t.team_need(t.team)
    # RULES.md §6 one-player teams: the opponent closest to a contract stands for them all.
    opp_need = max(t.team_need(u) for u in range(t.rules.num_teams) if u != t.team)
    rem = t.remaining
    to_set = rem - opp_need + 1  # tricks we need to set the opponents
    if need > rem:
        if opp_need > 0 and to_set <= 2:
            return take(t, legal, 'seed 000 "Bet": our contract is lost, set theirs')
        return duck(t, legal, 'seed 000 "Bet": contract lost, feed the opponents bags')
    if need <= 0:
        if opp_need > 0 and to_set <= 2:
            return take(t, legal, "contract made: take tricks to set the opponents")
        return duck(t, legal, 'seed 000 "Säckar": contract made, duck to avoid bags')
    return take(t, legal, f"the team needs {need} more tricks")


def take(t: Table, legal: list[int], why: str) -> Choice:
    """Win the tricks the team needs, as cheaply as possible."""
    if t.trick_size == 0:
        return lead_to_take(t, legal, why)
    seat, best = t.winner()
    follow = SUIT_OF[legal[0]] == t.lead_suit
    later = t.later_seats()
    if seat == t.partner and not any(t.can_beat_later(s, best, t.lead_suit) for s in later):
        if follow:
            return low(t, legal), "partner's card holds: play low"
        return discard_low(t, legal)[0], "partner's card holds: discard low"
    win = t.winning(legal)
    sure = [c for c in win if t.sure_win(c)]
    if follow:
        if sure:
            return low(t, sure), f'{why}: "win cheaply" with the lowest sure winner'
        if t.trick_size == 1:
            return low(t, legal), f'{why}: "second hand low"'
        if win and seat != t.partner:
            return high(t, win), f'{why}: "third hand high enough" to beat the trick'
        return low(t, legal), f"{why}: cannot win the trick, play my lowest card"
    # Void in the led suit: trump, with the lowest spade that wins.
    trumps = [c for c in sure if SUIT_OF[c] == t.trump]
    if trumps:
        return low(t, trumps), f"{why}: void, trump with the lowest {t.trump_word} that wins"
    trumps = [c for c in win if SUIT_OF[c] == t.trump]
    shown = any(t.voids[s] >> t.lead_suit & 1 for s in later if s != t.partner)
    if trumps and not shown:
        # Nobody after me has shown out of the suit: an over-ruff is only a risk.
        return low(t, trumps), f"{why}: void, trump low (no one after me has shown out)"
    return discard_low(t, legal)


def lead_to_take(t: Table, legal: list[int], why: str) -> Choice:
    """Lead to win tricks: draw trumps, cash winners, set up ruffs, else lead low."""
    spades = [c for c in legal if SUIT_OF[c] == t.trump]
    sides = [c for c in legal if SUIT_OF[c] != t.trump]
    mine = (t.hand & SUIT_BITS[t.trump]).bit_count()
    out = t.spades_out()
    if spades and out and t.is_master(max(spades)) and mine >= out:
        # seed 000 "Har du däremot lång trumf och toppkorten": draw the spades early.
        return max(spades), f"{why}: long {t.trump_word}s and the top: draw trumps"
    opps = t.opponents()

    def ruffed(suit: int) -> bool:
        return any(t.may_ruff(o, suit) for o in opps)

    masters = [c for c in sides if t.is_master(c) and not ruffed(SUIT_OF[c])]
    if masters:
        # Cash a sure winner; with no spade left outside, every master is as good as an
        # ace (seed 000 "Räkna spadern").
        return high(t, masters), f"{why}: cash a sure winner"
    p = t.partner
    partner_ruffs = [
        c
        for c in sides
        if t.has_partner and t.voids[p] >> SUIT_OF[c] & 1 and t.can_hold(p) & SUIT_BITS[t.trump]
    ]
    if partner_ruffs:
        return low(t, partner_ruffs), f"{why}: lead a suit the partner can ruff"
    # No lead into an opponent's void: it would hand them a cheap ruff.
    safe = [c for c in sides if not any(t.voids[o] >> SUIT_OF[c] & 1 for o in opps)] or sides
    if safe and mine >= 1:
        single = [c for c in safe if suit_len(t, SUIT_OF[c]) == 1 and not t.is_master(c)]
        if single and RANK[single[0]] < 10:
            return low(t, single), f"{why}: lead a singleton to ruff that suit later"
    if safe:
        # Lead low from a long suit not headed by a king or queen that waits to be guarded.
        def key(c: int) -> tuple[bool, int, int]:
            top = max(x for x in safe if SUIT_OF[x] == SUIT_OF[c])
            unguarded = higher_out(t, top) > 0 and RANK[top] >= 10
            return (unguarded, -suit_len(t, SUIT_OF[c]), RANK[c])

        return min(safe, key=key), f"{why}: lead low from my longest suit"
    masters = [c for c in spades if t.is_master(c)]
    if masters:
        return low(t, masters), f"{why}: only {t.trump_word}s left, cash the top one"
    # seed 000 "Vänta med att bryta trumfen så länge motståndarna har fler spader än du".
    return low(t, spades), f"{why}: only {t.trump_word}s left, lead the lowest"


def choose_card(t: Table) -> Choice:
    """The card to play now, and why (see the module docstring for the priorities)."""
    legal = cards(t.legal)
    if len(legal) == 1:
        return legal[0], "the only legal card"
    me = t.seat
    if t.bids[me] == 0 and (t.tricks_won[me] == 0 or t.rules.nil_tricks == "bags"):
        return play_nil(t, legal)
    if t.has_partner and t.is_nil(t.partner):
        return protect_nil(t, legal)
    nils = [s for s in t.opponents() if t.is_nil(s)]
    if nils:
        need, rem = t.team_need(t.team), t.remaining
        if not rem - 1 <= need <= rem:  # the nil is worth more, unless the contract is tight
            choice = set_nil(t, legal, nils)
            if choice is not None:
                return choice
    return play_contract(t, legal)
