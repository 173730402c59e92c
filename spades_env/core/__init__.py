"""The rules core: every rule of Spades written once, compiled with numba.

Modules (all functions are `numba.njit(cache=True)`; `f.py_func` is plain Python):

- `core.rule_functions`: the rules of one game as scalar functions (RULES.md §1-§3, §6), with the
  variant as arguments (trump suit, players, ...):
  `legal_cards(held, trick_size, lead_suit, broken, trump, two_clubs) -> uint64` the
  cards that may be played; `card_strength(card, lead_suit, trump) -> int` (-1: cannot
  win); `trick_winner(trick, leader, num_players, lead_suit, trump) -> seat`;
  `shown_voids(card, trick_size, lead_suit, broken, trump) -> suit bits` (public
  information of a play); `breaks_trump(card, trump)`;
  `bid_top(max_bid, max_total, bids, num_players)` and
  `legal_bids(min_bid, top, bid_rule, held, partner_bid) -> uint64` (bit b = bid b);
  `blind_allowed(blind_mode, bid_rule, partner_bid, scores, num_teams, team)`;
  `trump_namer(dealer, bids, num_players)` (§6 auction);
  `first_leader(two_clubs, hands, dealer, num_players)`; `must_pass`, `next_passer`
  (§2 exchange); `partner_of`; bit helpers `popcount`, `lowest`, `bit`, `suit_of`,
  `suit_cards`.
- `core.scoring`: `score_hand(r, bids, blind, tricks, points, bags, contract, made)`,
  `apply_bags(r, scores, bags, penalty)`, `game_winner(r, scores, hands_played)`
  (RULES.md §4-§5; `r` is the rules vector below).
- `core.deal`: `splitmix64`, `shuffle(deck, seed, hand_no, out)`,
  `deal(deck, seed, hand_no, num_players, hand_size, hands)`, `first_dealer(seed, P)`:
  reproducible deals, a pure function of (seed, hand number); `places` counts each
  card's place in the shuffled deck (a stable sort's positions, without sorting).
- `core.rules_vector`: `rules_vector(rules)`, the (VECTOR_SIZE,) int64 vector of rule options (`R_*`
  indices: `R_P` players, `R_K` hand size, `R_T` teams, `R_BID_RULE`, `R_BLIND`,
  `R_NAMED`, `R_DECK`, ...) and of where each `State` field sits in the packed row
  (`L_*`); the constants `BID_*` and `BLIND_*` of the bid and blind-nil options.
- `core.kernel`: the hand's flow over the packed `State` rows: `step_game` (one action of
  one game: play, bid, blind nil, exchange, draw, naming trump, end of hand and the next
  deal), `legal_bits`, `start_hand`, and the batch loops the engine calls
  (`step_batch`, `step_batch_random` (the random agent's pick made inside the step),
  each over a range of rows so that threads can share a batch, with `pack_records`
  moving the finished hands' records to the front; `start_hands`, `new_games`,
  `stop_games`, `refresh_legal`, `random_legal`, `action_mask`); `PHASE_BASE`,
  `HISTORY_SEAT_SHIFT`.
- `core.borrow`: `borrow` (an array without reference counting, inside a kernel),
  `stack_array` (scratch on the stack), `prefetch` (a cache-line hint).

Search kernels and solvers with their own layout call `core.rule_functions` and `core.scoring`
directly; anything holding a `State` steps it through `core.kernel` (or `engine.step`).
"""
