"""One thin module per subcommand: parse arguments, call one core entry point, render.

These modules (and ``paimon_cli.app``) do not use ``from __future__ import annotations``: typer
reads a command's parameters from its signature several times per run, evaluating every string
annotation again each time (~1.3 ms of each start-up); annotations written as objects are
evaluated once, at import (issue 28)."""
