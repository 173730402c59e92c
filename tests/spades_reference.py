"""A small, obviously-correct Spades reference in plain Python, written from RULES.md §1-§5
for the `standard` preset and its options. It imports nothing from the engine: cards are
`suit * 13 + rank` (suits S H D C, ranks 2..A as 0..12) and actions follow the documented
layout (0..51 cards, 54 + b bid b with 54 = nil, 72 blind nil, 73 see hand).

`RefHand` plays one hand from a deal, a dealer and the position before it; the tests use
it to check the engine's hand records and, step by step, the engine's legal actions.
It is written for clarity, not speed.
"""

from __future__ import annotations

from spades_env.rules import Rules  # the options only; no rule logic comes from here

SPADES = 0
BID0, BLIND_NIL, SEE_HAND = 54, 72, 73
TWO_OF_CLUBS = 3 * 13 + 0
# Phase numbers as documented in state.py.
BLIND, BID, EXCHANGE, PLAY, DONE = 0, 1, 2, 3, 4


def suit(card: int) -> int:
    return card // 13


def rank(card: int) -> int:
    return card % 13


def by_suit(mask: int) -> list[set[int]]:
    """A hand as four sets of cards, one per suit."""
    return [{c for c in range(13 * s, 13 * s + 13) if mask >> c & 1} for s in range(4)]


def trick_winner(plays: list[tuple[int, int]]) -> int:
    """RULES.md §3: the highest spade wins; with no spade, the highest card of the led
    suit. `plays` are (seat, card) in the order played."""
    led = suit(plays[0][1])
    spades = [(rank(c), s) for s, c in plays if suit(c) == SPADES]
    if spades:
        return max(spades)[1]
    return max((rank(c), s) for s, c in plays if suit(c) == led)[1]


def team_points(rules: Rules, bids, blind, tricks, team: int) -> tuple[int, int]:
    """RULES.md §4: (points, bags) of one team for one hand, before the bag penalty.
    (thirteen_bid_doubles and ten_for_two_hundred are not modelled.)"""
    members = [team, team + 2]
    contract = sum(bids[m] for m in members if bids[m] > 0)
    nil_members = [m for m in members if bids[m] == 0]
    if rules.nil_tricks == "bags":
        judged = sum(tricks[m] for m in members if bids[m] > 0)
        nil_bags = sum(tricks[m] for m in nil_members)
    else:
        judged = sum(tricks[m] for m in members)
        nil_bags = 0
    points = bags = 0
    if judged >= contract:
        points += 10 * contract + (judged - contract)
        bags += judged - contract
    else:
        points -= 10 * contract
    for m in nil_members:
        value = rules.blind_nil_value if blind[m] else rules.nil_value
        points += value if tricks[m] == 0 else -value
    return points + nil_bags, bags + nil_bags


def blind_offered(rules: Rules, scores: list[int], seat: int) -> bool:
    """RULES.md §2 option blind_nil."""
    if rules.blind_nil == "never":
        return False
    if rules.blind_nil == "always":
        return True
    team = seat % 2
    return scores[1 - team] - scores[team] >= 100


def game_end(rules: Rules, scores: list[int], hands_played: int) -> int | None:
    """RULES.md §5: the winning team if the game is over after this hand, else None."""
    s0, s1 = scores
    trigger = max(s0, s1) >= rules.target
    trigger |= rules.lose_at is not None and min(s0, s1) <= rules.lose_at
    trigger |= rules.max_hands is not None and hands_played >= rules.max_hands
    if not trigger or s0 == s1:
        return None  # an exact tie plays another hand
    return 0 if s0 > s1 else 1


class RefHand:
    """One hand of Spades, played one action at a time."""

    def __init__(
        self, rules: Rules, deal: list[int], dealer: int, scores: list[int], bags: list[int]
    ):
        self.rules = rules
        self.dealer = dealer
        self.scores_before, self.bags_before = list(scores), list(bags)
        self.held = [by_suit(m) for m in deal]  # held[seat][suit]: cards not played yet
        assert [len(self.hand(s)) for s in range(4)] == [13] * 4
        assert set().union(*(self.hand(s) for s in range(4))) == set(range(52))
        self.bids, self.blind = [-1] * 4, [False] * 4
        self.turn = (dealer + 1) % 4  # RULES.md §2: bidding starts left of the dealer
        self.phase = BLIND if blind_offered(rules, scores, self.turn) else BID
        self.passes: dict[int, list[int]] = {}
        self.passers: list[int] = []
        self.trick: list[tuple[int, int]] = []
        self.played: set[int] = set()
        self.broken = False
        self.tricks = [0] * 4
        self.tricks_played = 0

    def hand(self, seat: int) -> set[int]:
        return set().union(*self.held[seat])

    # ------------------------------------------------------------------ legality
    def legal(self) -> set[int]:
        if self.phase == BLIND:
            return {BLIND_NIL, SEE_HAND}
        if self.phase == BID:
            top = 13
            if self.rules.max_total_bid is not None:
                top = min(top, self.rules.max_total_bid - sum(b for b in self.bids if b > 0))
            return {BID0 + b for b in range(top + 1)}
        suits = self.held[self.turn]
        if self.phase == EXCHANGE:
            return self.hand(self.turn) - set(self.passes.get(self.turn, []))
        if self.phase == PLAY:
            if self.trick:
                led = suit(self.trick[0][1])
                if suits[led]:
                    return set(suits[led])  # RULES.md §3: follow suit when you can
                return self.hand(self.turn)
            if self.tricks_played == 0 and self.rules.first_lead == "two_of_clubs":
                return {TWO_OF_CLUBS}
            non_spades = suits[1] | suits[2] | suits[3]
            if not self.broken and non_spades:
                return non_spades  # RULES.md §3: no spade lead before spades are broken
            return self.hand(self.turn)
        return set()

    # ------------------------------------------------------------------ actions
    def apply(self, action: int) -> None:
        assert action in self.legal(), (self.phase, self.turn, action, sorted(self.legal()))
        if self.phase == BLIND:
            if action == SEE_HAND:
                self.phase = BID
                return
            self.blind[self.turn] = True
            self._bid(0)
        elif self.phase == BID:
            self._bid(action - BID0)
        elif self.phase == EXCHANGE:
            self.passes.setdefault(self.turn, []).append(action)
            self._next_passer()
        else:
            self._play(action)

    def _bid(self, bid: int) -> None:
        self.bids[self.turn] = bid
        if -1 in self.bids:
            self.turn = (self.turn + 1) % 4
            offered = blind_offered(self.rules, self.scores_before, self.turn)
            self.phase = BLIND if offered else BID
            return
        # RULES.md §2 blind_nil_exchange: a blind-nil bidder and partner pass 2 cards each,
        # in turn from left of the dealer.
        if self.rules.blind_nil_exchange:
            order = [(self.dealer + 1 + i) % 4 for i in range(4)]
            self.passers = [s for s in order if self.blind[s] or self.blind[(s + 2) % 4]]
        self._next_passer()

    def _next_passer(self) -> None:
        waiting = [s for s in self.passers if len(self.passes.get(s, [])) < 2]
        if waiting:
            self.phase, self.turn = EXCHANGE, waiting[0]
            return
        for s in self.passers:  # the cards change hands once every pass is chosen
            for card in self.passes[s]:
                self.held[s][suit(card)].remove(card)
                self.held[(s + 2) % 4][suit(card)].add(card)
        self.phase = PLAY
        if self.rules.first_lead == "two_of_clubs":
            self.turn = next(s for s in range(4) if TWO_OF_CLUBS in self.hand(s))
        else:
            self.turn = (self.dealer + 1) % 4

    def _play(self, card: int) -> None:
        self.held[self.turn][suit(card)].remove(card)
        self.played.add(card)
        self.trick.append((self.turn, card))
        self.broken |= suit(card) == SPADES
        if len(self.trick) < 4:
            self.turn = (self.turn + 1) % 4
            return
        winner = trick_winner(self.trick)
        self.tricks[winner] += 1
        self.tricks_played += 1
        self.trick = []
        self.turn = winner  # RULES.md §3: the winner leads the next trick
        if self.tricks_played == 13:
            self.phase = DONE

    # ------------------------------------------------------------------ outcome
    def outcome(self) -> dict:
        """Points, bags, penalty and the new position once the hand is over (RULES.md §4)."""
        assert self.phase == DONE and len(self.played) == 52
        assert not any(self.hand(s) for s in range(4))
        out: dict = {k: [] for k in ("points", "bags_gained", "penalty", "scores", "bags")}
        for team in range(2):
            points, gained = team_points(self.rules, self.bids, self.blind, self.tricks, team)
            total = self.bags_before[team] + gained
            times = total // self.rules.bag_limit  # each time the counter reaches the limit
            penalty = times * self.rules.bag_penalty
            out["points"].append(points)
            out["bags_gained"].append(gained)
            out["penalty"].append(penalty)
            out["scores"].append(self.scores_before[team] + points - penalty)
            out["bags"].append(total - times * self.rules.bag_limit)
        return out
