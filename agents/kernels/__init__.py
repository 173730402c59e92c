"""The compiled card play every agent shares: how kernels are compiled and cached
(`compile`), the random streams kernels draw from (`streams`), and the play-out of a hand
with its card helpers (`play`). Every name here is public to the other agent packages."""
