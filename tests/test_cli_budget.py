"""``pystanprivacy budget create | show | history``: a persistent budget from the command line
(:mod:`pystanprivacy.privacy.ledger`)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from pystanprivacy import PrivacyAccountant, cli
from pystanprivacy.privacy.ledger import PrivacyLedger
from pystanprivacy.privacy.mechanisms import Gaussian, Laplace


def test_create_show_history_of_a_ledger_spent_by_mechanisms(tmp_path, capsys):
    """``create`` makes the ledger the API opens; ``show`` states what an in-memory accountant
    given the same spends states; ``history`` prints that accountant's ledger table."""
    path = tmp_path / "budget.db"
    argv = ["budget", "create", str(path), "--dataset", "clinic-2026", "--epsilon", "2", "--delta", "1e-6"]
    assert cli.main([*argv, "--composition", "zcdp"]) == 0
    out = capsys.readouterr().out
    assert "dataset    clinic-2026" in out and "budget     epsilon=2.0, delta=1e-06, zcdp composition" in out
    memory = PrivacyAccountant(2.0, 1e-6, composition="zcdp")
    with PrivacyLedger.open(path, dataset="clinic-2026", epsilon=2.0, delta=1e-6, composition="zcdp") as ledger:
        for acc in (ledger, memory):
            Laplace(epsilon=0.5, sensitivity=1.0, seed=3).release(np.array([1.0]), accountant=acc, label="mean")
            Gaussian(epsilon=0.5, delta=1e-7, sensitivity=1.0, seed=3).release(np.ones(2), accountant=acc, label="sums")
        head = ledger.head_hash
    assert cli.main(["budget", "show", str(path)]) == 0
    out = capsys.readouterr().out
    spent, remaining = memory.spent, memory.remaining
    assert f"spent      epsilon={spent[0]!r}, delta={spent[1]!r}" in out
    assert f"remaining  epsilon={remaining[0]!r}, delta={remaining[1]!r}" in out
    assert "entries    2 (last " in out and out.rstrip().endswith(f"head hash  {head}")
    assert cli.main(["budget", "history", str(path), "--dataset", "clinic-2026"]) == 0
    assert capsys.readouterr().out == memory.ledger_table() + "\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["create", "{p}", "--dataset", "d", "--epsilon", "nan"], "epsilon must be a finite number > 0"),
        (["create", "{p}", "--dataset", "d", "--epsilon", "1", "--delta", "1"], "delta"),
        (["create", "{p}", "--epsilon", "1"], "--dataset"),
        (["create", "{p}", "--dataset", "d", "--epsilon", "1", "--composition", "x"], "invalid choice"),
        (["show", "{p}"], "no ledger at"),
        (["history", "{p}"], "no ledger at"),
    ],
)
def test_bad_arguments_exit_2_naming_them_and_create_nothing(tmp_path, capsys, argv, message):
    path = tmp_path / "b.db"
    with pytest.raises(SystemExit) as info:
        cli.main(["budget", *[a.format(p=path) for a in argv]])
    assert info.value.code == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_create_never_overwrites_and_show_refuses_another_data_sets_ledger(tmp_path, capsys):
    path = tmp_path / "b.db"
    assert cli.main(["budget", "create", str(path), "--dataset", "a", "--epsilon", "1"]) == 0
    before = path.read_bytes()
    for argv in (
        ["budget", "create", str(path), "--dataset", "a", "--epsilon", "5"],
        ["budget", "show", str(path), "--dataset", "b"],
    ):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "dataset='b', but the ledger" in err
    assert path.read_bytes() == before


def test_a_tampered_or_foreign_file_exits_1_with_the_reason(tmp_path, capsys):
    path = tmp_path / "b.db"
    with PrivacyLedger.create(path, dataset="d", epsilon=1.0) as ledger:
        ledger.spend(0.25, label="a")
        ledger.spend(0.25, label="b")
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE ledger_entries SET epsilon = 0.01 WHERE seq = 1")
    conn.close()
    assert cli.main(["budget", "history", str(path)]) == 1
    assert "entry 1 was changed after it was written" in capsys.readouterr().err
    text = tmp_path / "notes.txt"
    text.write_text("not a ledger\n")
    assert cli.main(["budget", "show", str(text)]) == 1
    assert "not an SQLite database" in capsys.readouterr().err


def test_the_console_script_runs_budget(tmp_path):
    path = tmp_path / "b.db"
    run = subprocess.run(
        [sys.executable, "-m", "pystanprivacy", "budget", "create", str(path), "--dataset", "d", "--epsilon", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "remaining  epsilon=1.0, delta=0.0" in run.stdout
    assert PrivacyLedger.open(path).dataset == "d"
