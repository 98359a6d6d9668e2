"""`python -m judge`: the `judge` command."""

from .cli import main

raise SystemExit(main())
