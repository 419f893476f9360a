"""Side channels of one-posterior sampling and of the command line (issue 17).

* An OPS attempt is charged before its Stan run; a refusal keeps the charge, says so, and
  shows no statistic of the run (only the public thresholds and what the user can change).
* OPS records carry ``secure`` / ``randomness`` like the mechanisms' records; a seeded draw
  warns once; an unseeded draw picks its (chain, draw) with ``secrets``.
* ``pystanprivacy audit --help`` prints its text as written.

Stan runs are tiny (2 chains, few draws) and seeded, so every test here is deterministic.
"""
from __future__ import annotations

import pytest

from pystanprivacy import cli


@pytest.mark.parametrize("command", ["models", "reproduce", "audit"])
def test_help_text_prints_percent_signs_as_written(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "%%" not in out
    if command == "audit":
        assert "Clopper-Pearson lower bound on epsilon (95 % confidence) next to the claimed epsilon" in out
