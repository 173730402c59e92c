"""The `spades` command line: `app` wires the subcommands, one module each (`demo`,
`bench`, `tournament`, `show`, `analyze`, `play`, `train`)."""
