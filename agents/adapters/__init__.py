"""Agents from outside the project: a Stable-Baselines3 model (`sb3`), a plain function
or a torch module (`functions`), and what `checkpoint:` says of a file that is not one of
the project's checkpoints (`foreign_files`)."""
