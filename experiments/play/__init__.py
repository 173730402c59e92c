"""`spades play`: a person at the table. `session` holds the game and the moves typed,
`screen` draws the table and `sheets` the score sheets (with rich)."""
