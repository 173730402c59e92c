"""Agents from outside the project: an installed plugin, a Python file or a module named
by a spec (`sources`, which the registry imports them through), a Stable-Baselines3
model (`sb3`), a plain function or a torch module (`functions`), and what `checkpoint:`
says of a file that is not one of the project's checkpoints (`foreign_files`)."""
