"""Properties of random hands on every RULES.md §6 preset, checked from the hand records
with the rules written out here (the plain-Python reference covers the standard table
only): every card played comes from its player's hand, suit is followed, trumps are not
led unbroken while other cards are held, the first lead is right, each trick goes to its
highest trump or highest card of the led suit, and the tricks and scores add up."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.cards import CARD_RANK, CARD_SUIT, NUM_CARDS, SUIT_MASK, TWO_OF_CLUBS
from spades_env.engine import HISTORY_SEAT_SHIFT, random_legal_actions, reset_done, step
from spades_env.rules import PRESETS, Rules
from spades_env.state import init

HANDS = 150  # per preset


def _strength(card: int, lead: int, trump: int) -> tuple[int, int]:
    suit = int(CARD_SUIT[card])
    return (2 if suit == trump else 1 if suit == lead else 0, int(CARD_RANK[card]))


def _check_hand(rules: Rules, res, k: int) -> None:
    p, h = rules.num_players, rules.hand_size
    trump, dealer = int(res.trump[k]), int(res.dealer[k])
    held = [int(x) for x in res.deal[k]]
    assert sum(bin(x).count("1") for x in held) == p * h
    plays = [
        (int(e) >> HISTORY_SEAT_SHIFT, int(e) & 127)
        for e in res.history[k][: res.history_len[k]]
        if (int(e) & 127) < NUM_CARDS
    ]
    assert len(plays) == p * h
    tricks, broken = [0] * p, False
    leader = (dealer + 1) % p
    if rules.first_lead == "two_of_clubs":
        leader = next(s for s in range(p) if held[s] >> TWO_OF_CLUBS & 1)
    for t in range(h):
        trick = plays[t * p : (t + 1) * p]
        assert [s for s, _ in trick] == [(leader + i) % p for i in range(p)]
        lead = int(CARD_SUIT[trick[0][1]])
        for i, (seat, card) in enumerate(trick):
            hand = held[seat]
            assert hand >> card & 1, "a card from the player's hand"
            suit = int(CARD_SUIT[card])
            if i == 0 and suit == trump and not broken:
                assert hand & ~int(SUIT_MASK[trump]) == 0, "trump led unbroken"
            if i > 0 and suit != lead:
                assert hand & int(SUIT_MASK[lead]) == 0, "did not follow suit"
            held[seat] = hand & ~(1 << card)
        broken |= any(int(CARD_SUIT[c]) == trump for _, c in trick)
        winner = max(trick, key=lambda sc: _strength(sc[1], lead, trump))[0]
        tricks[winner] += 1
        leader = winner
    assert tricks == res.tricks[k].tolist()
    total = res.scores_before[k] + res.points[k] - res.penalty[k]
    assert (total == res.scores[k]).all()
    assert ((res.bags[k] >= 0) & (res.bags[k] < rules.bag_limit)).all()


@pytest.mark.parametrize("name", PRESETS)
def test_random_hands_of_every_preset_follow_the_rules(name: str) -> None:
    rules = Rules.preset(name)
    rng = np.random.default_rng(7)
    state = init(rules, 64, rng)
    done = 0
    while done < HANDS:
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            for k in range(len(info.finished.games)):
                _check_hand(rules, info.finished, k)
                done += 1
            reset_done(state, rng)
