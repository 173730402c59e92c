"""What the commands and scripts above the game share, and the game itself never imports:
their flag parser (`flags`), safe file writes (`files`), the small statistics of
evaluations and tournaments (`stats`), the check of a Ray cluster's `--address`
(`ray_address`), and the helper of the warning stubs left at old import paths
(`renamed`). It sits in the lowest package so that `agents`, `training` and
`experiments` all reach it without an upward import."""
