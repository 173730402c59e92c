"""The learned player: the networks, the agent that plays a checkpoint (`agent`), the exact
endgame it can hand the last tricks to (`endgame`), and the shipped checkpoints."""
