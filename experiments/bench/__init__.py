"""`spades bench`: `runner` holds the sections and their reference rows; `envs` the
PettingZoo and Gymnasium env throughput, `search` the double-dummy solver and `mc` the
PIMC and ISMCTS searches."""
