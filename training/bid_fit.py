"""Fit the trick model (`agents.heuristic.trick_model`) to the project's own play.

    python -m training.bid_fit --hands 40000 --rounds 2 --seed 0 \
        --out agents/heuristic/data/trick_model.json

Data: hands of four heuristic seats (one hand each, the standard rules), a share of them
(`--context`) started from a random score and bag count so the score features are
fitted too. Every seat bids as its bidder says, except that with probability
`--explore` a bid is changed, to nil (when the hand's nil danger leaves it a chance) or
one trick up or down, so the nil model sees nils on hands the bidder would not risk and
the trick model sees hands played under other bids (the feature `bid_offset`: what
bidding a trick more or less than the bidder would does to the team's tricks). The card
play is the heuristic's, or that of `--player SPEC` (e.g. `learned`): the model then
predicts the tricks of that player's card play, for a bidder that plays its cards so
(`learned:bid=model,model=PATH`).

Round 1's seats bid by rule text 000's count (`heuristic:bid=rules`); each later round's
seats bid with the model fitted in the round before, and the model is refitted on that
round's hands alone, so the partner table describes partners that bid with the model.

Fit (PyTorch, L-BFGS, a small L2 penalty): the ordinal logit of the team's tricks beyond
the partner's bid, for the seats that bid a number; the logistic regression of a nil
made, for the nil bidders (blind nils excluded: they are bid unseen); and the partner
table, counted from the seats whose bid was not changed. The file records this command,
the data's size and the fitted log-likelihoods.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.heuristic.agent import HeuristicAgent
from agents.heuristic.bidding import nil_danger
from agents.heuristic.trick_model import (
    FEATURES,
    TRICKS,
    Y_CLASSES,
    Y_LOW,
    TrickModel,
    bidding_order,
    context_features,
    hand_features,
)
from spades_env.cards import BID_BASE
from spades_env.engine import legal_action_mask, step, stop_games
from spades_env.observation import encode, seat_view
from spades_env.rules import Rules
from spades_env.state import BID, DONE, PLAY, State, init

#: a hand risks an explored nil only below this seed-000 nil danger
EXPLORE_NIL_DANGER = 2.0


@dataclass
class Hands:
    """Played hands, one row per hand (N of them)."""

    deal: npt.NDArray[np.uint64]  # (N, 4) hands as dealt
    dealer: npt.NDArray[np.int64]  # (N,)
    bids: npt.NDArray[np.int64]  # (N, 4) 0 = nil
    blind: npt.NDArray[np.bool_]  # (N, 4)
    tricks: npt.NDArray[np.int64]  # (N, 4)
    scores: npt.NDArray[np.int64]  # (N, 2) before the hand
    bags: npt.NDArray[np.int64]  # (N, 2) before the hand
    offset: npt.NDArray[np.int64]  # (N, 4) exploration's change to the bid (0: none)


def _explore(
    view, actions: npt.NDArray[np.int64], rng: np.random.Generator, rate: float
) -> npt.NDArray[np.int64]:
    """Change a share `rate` of the bids in place (see the module docstring); return
    each game's change (new bid less the bidder's, 0 where unchanged)."""
    changed = np.zeros(actions.shape[0], dtype=np.int64)
    for g in np.flatnonzero((view.phase == BID) & (rng.random(actions.shape[0]) < rate)):
        legal = int(view.legal[g])
        bid = int(actions[g]) - BID_BASE
        if nil_danger(int(view.hand[g])) < EXPLORE_NIL_DANGER and bid > 0 and rng.random() < 0.5:
            new = 0
        else:
            new = max(1, bid + int(rng.choice((-1, 1))))
        if legal >> new & 1 and new != bid:
            actions[g], changed[g] = BID_BASE + new, new - bid
    return changed


def _actions(bidder: HeuristicAgent, player: BaseAgent | None, state: State):
    """(seat views, every game's action): `bidder`'s, but `player`'s in card play."""
    view = seat_view(state)
    if player is None:
        return view, bidder.act(view, None, None)
    actions = np.zeros(state.batch_size, dtype=np.int64)
    playing = state.phase == PLAY
    for idx, agent in ((np.flatnonzero(~playing), bidder), (np.flatnonzero(playing), player)):
        if idx.size:
            obs = encode(state)[idx] if agent.needs_obs else None
            actions[idx] = agent.act(view.take(idx), obs, legal_action_mask(state)[idx])
    return view, actions


def play_hands(
    bidder: HeuristicAgent,
    n: int,
    rng: np.random.Generator,
    explore: float,
    context: float,
    batch: int = 2000,
    player: BaseAgent | None = None,
) -> Hands:
    """`n` hands of four seats bidding with `bidder` and playing their cards as it does,
    or as `player` does (see the module doc)."""
    rules = Rules()
    parts: list[Hands] = []
    for start in range(0, n, batch):
        g = min(batch, n - start)
        seeds = rng.integers(0, 2**63, size=g, dtype=np.uint64)
        scores = np.zeros((g, 2), dtype=np.int64)
        bags = np.zeros((g, 2), dtype=np.int64)
        ctx = rng.random(g) < context
        scores[ctx] = rng.integers(-25, 46, size=(int(ctx.sum()), 2)) * 10
        bags[ctx] = rng.integers(0, 10, size=(int(ctx.sum()), 2))
        state = init(rules, g, seeds=seeds, scores=scores, bags=bags)
        offset = np.zeros((g, 4), dtype=np.int64)
        rows: list[tuple[npt.NDArray[np.int64], object]] = []
        while (state.phase != DONE).any():
            view, actions = _actions(bidder, player, state)
            changed = _explore(view, actions, rng, explore)
            games = np.flatnonzero(changed)
            offset[games, state.to_act[games]] = changed[games]
            info = step(state, actions)
            if info.finished is not None:
                rows.append((info.finished.games, info.finished))
                stop_games(state, info.finished.games)
        order = np.concatenate([gm for gm, _ in rows])
        res = [r for _, r in rows]

        def cat(name: str, res=res, order=order) -> npt.NDArray:
            out = np.concatenate([getattr(r, name) for r in res])
            return out[np.argsort(order)]

        parts.append(
            Hands(
                deal=cat("deal"),
                dealer=cat("dealer").astype(np.int64),
                bids=cat("bids").astype(np.int64),
                blind=cat("blind"),
                tricks=cat("tricks").astype(np.int64),
                scores=cat("scores_before").astype(np.int64),
                bags=cat("bags_before").astype(np.int64),
                offset=offset,
            )
        )
    return Hands(
        **{f: np.concatenate([getattr(p, f) for p in parts]) for f in Hands.__dataclass_fields__}
    )


def seat_rows(h: Hands) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], ...]:
    """Every seat-hand: (features (M, F), bid, tricks, blind, hand index, seat, team
    tricks beyond the partner's bid (agents.heuristic.trick_model))."""
    x, bid, tricks, blind, idx, seat, team = [], [], [], [], [], [], []
    for i in range(h.deal.shape[0]):
        order = bidding_order(int(h.dealer[i]))
        for pos, s in enumerate(order):
            before = [int(h.bids[i, u]) if u in order[:pos] else -1 for u in range(4)]
            ctx = context_features(
                s, before, h.scores[i].tolist(), h.bags[i].tolist(), order, int(h.offset[i, s])
            )
            x.append(hand_features(int(h.deal[i, s])) + ctx)
            bid.append(h.bids[i, s])
            tricks.append(h.tricks[i, s])
            blind.append(h.blind[i, s])
            idx.append(i)
            seat.append(s)
            p = (s + 2) % 4
            beyond = h.tricks[i, p] - h.bids[i, p] if h.bids[i, p] > 0 else 0
            team.append(h.tricks[i, s] + beyond)
    return (
        np.array(x, dtype=np.float64),
        np.array(bid),
        np.array(tricks),
        np.array(blind, dtype=bool),
        np.array(idx),
        np.array(seat),
        np.clip(np.array(team), Y_LOW, TRICKS - 1),
    )


def fit_ordinal(x, y, l2: float) -> tuple[npt.NDArray, npt.NDArray, float]:
    """Ordinal logit P(y <= k) = sigmoid(theta_k - x.w), y = 0..classes - 1:
    (w, theta, mean log-likelihood)."""
    import torch

    xt = torch.tensor(x, dtype=torch.float64)
    yt = torch.tensor(y, dtype=torch.int64)
    w = torch.zeros(x.shape[1], dtype=torch.float64, requires_grad=True)
    first = torch.tensor([-3.0], dtype=torch.float64, requires_grad=True)
    steps = torch.zeros(Y_CLASSES - 2, dtype=torch.float64, requires_grad=True)

    def nll() -> torch.Tensor:
        theta = torch.cat([first, first + torch.cumsum(torch.nn.functional.softplus(steps), 0)])
        cdf = torch.sigmoid(theta[None, :] - (xt @ w)[:, None])
        ones = torch.ones(len(y), 1, dtype=torch.float64)
        cdf = torch.cat([torch.zeros(len(y), 1, dtype=torch.float64), cdf, ones], 1)
        p = cdf.gather(1, (yt + 1)[:, None]) - cdf.gather(1, yt[:, None])
        return -torch.log(p.clamp_min(1e-12)).mean() + l2 * (w**2).sum()

    opt = torch.optim.LBFGS([w, first, steps], max_iter=500, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = nll()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        theta = torch.cat([first, first + torch.cumsum(torch.nn.functional.softplus(steps), 0)])
        ll = -(nll() - l2 * (w**2).sum()).item()
    return w.detach().numpy(), theta.numpy(), ll


def fit_logistic(x, y, l2: float) -> tuple[npt.NDArray, float, float]:
    """Logistic regression P(y) = sigmoid(x.v + v0): (v, v0, mean log-likelihood)."""
    import torch

    xt = torch.tensor(x, dtype=torch.float64)
    yt = torch.tensor(y, dtype=torch.float64)
    v = torch.zeros(x.shape[1] + 1, dtype=torch.float64, requires_grad=True)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    opt = torch.optim.LBFGS([v], max_iter=500, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = loss_fn(xt @ v[:-1] + v[-1], yt) + l2 * (v[:-1] ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        ll = -loss_fn(xt @ v[:-1] + v[-1], yt).item()
    out = v.detach().numpy()
    return out[:-1], float(out[-1]), ll


def fit(h: Hands, l2: float) -> tuple[TrickModel, dict]:
    """The trick model of these hands, and what the fit saw."""
    x, bid, tricks, blind, idx, seat, team = seat_rows(h)
    number = (bid > 0) & ~blind
    nil = (bid == 0) & ~blind
    if number.sum() < 10 or nil.sum() < 10:
        print(
            f"bid_fit: too few hands to fit ({int(number.sum())} number bids, "
            f"{int(nil.sum())} nils; need 10 of each): give more --hands",
            file=sys.stderr,
        )
        raise SystemExit(2)
    w, theta, ll = fit_ordinal(x[number], team[number] - Y_LOW, l2)
    x_nil = x[nil].copy()
    x_nil[:, FEATURES.index("bid_offset")] = 0  # a nil's chance is the hand's, not the offset's
    v, v0, nil_ll = fit_logistic(x_nil, (tricks[nil] == 0).astype(np.float64), l2)
    # the partner table: bids the bidder chose (not explored, not blind) and their tricks
    chosen = (h.offset[idx, seat] == 0) & ~blind
    partner = np.zeros((TRICKS, TRICKS), dtype=np.int64)
    np.add.at(partner, (bid[chosen], tricks[chosen]), 1)
    stats = {
        "hands": int(h.deal.shape[0]),
        "number_bids": int(number.sum()),
        "nil_bids": int(nil.sum()),
        "nils_made": float((tricks[nil] == 0).mean()),
        "explored_bids": int((h.offset != 0).sum()),
        "bid_offset_weight": float(w[FEATURES.index("bid_offset")]),
        "team_loglik": ll,
        "nil_loglik": nil_ll,
    }
    model = TrickModel(
        weights=w, thresholds=theta, nil_weights=v, nil_bias=v0, partner=partner.astype(float)
    )
    return model, stats


def _problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line, before any hand is played."""
    for name in ("hands", "rounds"):
        if getattr(args, name) < 1:
            return f"--{name} must be >= 1"
    for name in ("explore", "context"):
        if not 0 <= getattr(args, name) <= 1:
            return f"--{name} must be between 0 and 1"
    if args.l2 < 0:
        return "--l2 must be >= 0"
    if Path(args.out).is_dir():
        return f"--out {args.out} is a folder; give the model file's path"
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=40000, help="hands per round")
    parser.add_argument("--rounds", type=int, default=2, help="fit rounds (see the doc)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--explore", type=float, default=0.2, help="share of bids changed")
    parser.add_argument("--context", type=float, default=0.3, help="share from a random score")
    parser.add_argument("--l2", type=float, default=1e-4, help="L2 penalty on the weights")
    parser.add_argument("--out", default="agents/heuristic/data/trick_model.json")
    parser.add_argument(
        "--player", default="heuristic", help="agent spec of the card play (default heuristic)"
    )
    args = parser.parse_args(argv)
    problem = _problem(args)
    if problem:
        print(f"bid_fit: {problem}", file=sys.stderr)
        raise SystemExit(2)
    player = None
    if args.player != "heuristic":
        from agents.registry import make_agent, parse_agent

        try:
            spec = parse_agent(args.player, Rules())  # the flag's text, read once
            player = make_agent(spec, seed=args.seed)
        except ValueError as exc:
            print(f"bid_fit: --player: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    rng = np.random.default_rng(args.seed)
    bidder = HeuristicAgent(bid="rules")
    model, history = None, []
    for r in range(args.rounds):
        hands = play_hands(bidder, args.hands, rng, args.explore, args.context, player=player)
        model, stats = fit(hands, args.l2)
        history.append(stats)
        print(f"round {r + 1}: {stats}", file=sys.stderr)
        bidder = HeuristicAgent(bid="rules")
        bidder.model = model  # bid with this round's model (agents.heuristic.model_bids)
    assert model is not None
    command = "python -m training.bid_fit " + " ".join(f"--{k} {v}" for k, v in vars(args).items())
    meta = {"recipe": command, "rounds": history, "feature_count": len(FEATURES)}
    TrickModel(**{**model.__dict__, "meta": meta}).save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
