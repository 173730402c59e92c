"""`python -m experiments.cli ...`: the `spades` command."""

from experiments.cli.app import main

raise SystemExit(main())
