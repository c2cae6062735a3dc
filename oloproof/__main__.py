"""`python -m oloproof ...` is the `oloproof` command (used to start the embedded worker)."""

from oloproof.cli import command

command()
