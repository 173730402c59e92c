"""Monte Carlo search: sampling worlds consistent with what a seat has seen (`sampling`),
weighting them by the bids (`world_weights`), PIMC (`pimc`) and ISMCTS (`ismcts`) with
their compiled kernels, and what the searches share (`common`)."""
