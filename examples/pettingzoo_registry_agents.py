"""The PettingZoo AEC loop with the project's agents in the seats.

Any agent spec (`random`, `heuristic`, `pimc:worlds=16`, your own registered name) is
built with `make_agent` and seated by hand: at each turn the acting seat's agent gets the
seat's structured view (`env.unwrapped.seat_view(agent)`), its observation and its mask.
Replace one seat's agent with your policy's `(observation, mask) -> action` to play it
against them.

    python examples/pettingzoo_registry_agents.py            # 20 hands, heuristic vs random
    python examples/pettingzoo_registry_agents.py --tiny     # 1 hand (the tests)
"""

from __future__ import annotations

import argparse

from agents.registry import make_agent, parse_agent
from spades_env import spades_v0

SEATS = {
    "player_0": "heuristic",
    "player_1": "random",
    "player_2": "heuristic",
    "player_3": "random",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="1 hand")
    parser.add_argument("--hands", type=int, default=20)
    args = parser.parse_args()
    hands = 1 if args.tiny else args.hands
    players = {
        seat: make_agent(parse_agent(spec), seed=k) for k, (seat, spec) in enumerate(SEATS.items())
    }
    env = spades_v0.env()
    totals = dict.fromkeys(SEATS, 0.0)
    for hand in range(hands):
        env.reset(seed=hand)
        for seat in env.agent_iter():
            observation, reward, termination, truncation, _ = env.last()
            totals[seat] += reward
            if termination or truncation:
                action = None
            else:
                view = env.unwrapped.seat_view(seat)
                action = players[seat].act_one(
                    view, observation["observation"], observation["action_mask"].astype(bool)
                )
            env.step(action)
    env.close()
    for seat, spec in SEATS.items():
        print(f"{seat} ({spec}): {totals[seat] / hands:+.1f} points per hand")


if __name__ == "__main__":
    main()
