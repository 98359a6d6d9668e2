"""`python -m judge`: the `judge` command."""

from .cli import run

run()
