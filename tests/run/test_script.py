"""The shared command line of scripts/<paper>.py (pystanprivacy.run.script)."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from pystanprivacy.run.script import run_reproduce

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _fake(seen, *, takes_data=True, raises=None):
    def reproduce(out, *, quick, seed, workers, progress, **kwargs):
        if raises is not None:
            raise raises
        seen.update(out=out, quick=quick, seed=seed, workers=workers, progress=progress, **kwargs)
        return {"table": "ok"}

    def reproduce_without_data(out, *, quick, seed, workers, progress):
        seen.update(out=out, quick=quick)
        return {}

    return types.SimpleNamespace(PAPER="fakepaper", reproduce=reproduce if takes_data else reproduce_without_data)


def test_options_reach_reproduce(tmp_path, capsys):
    seen = {}
    data = tmp_path / "d.csv"
    data.write_text("x\n")
    tables = run_reproduce(
        _fake(seen),
        ["--full", "--seed", "3", "--workers", "2", "--no-progress", "--out", str(tmp_path / "o"), "--data", str(data)],
        description="fake",
        data_help="a file",
    )
    assert tables == {"table": "ok"}
    assert seen == {
        "out": str(tmp_path / "o"),
        "quick": False,
        "seed": 3,
        "workers": 2,
        "progress": False,
        "data_path": str(data),
    }
    assert "done in" in capsys.readouterr().out


def test_defaults_and_alias(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.chdir(tmp_path)
    run_reproduce(
        _fake(seen),
        ["--kosarak", str(tmp_path)],
        description="fake",
        data_flags=("--kosarak", "--data"),
        data_help="a folder",
    )
    # quick by default, into results-quick/ (results/ holds the committed full-scale results)
    assert seen["quick"] is True and seen["out"] == str(Path("results-quick") / "fakepaper")
    assert seen["data_path"] == str(tmp_path) and seen["seed"] == 0 and seen["workers"] == 1
    run_reproduce(_fake(seen), ["--full"], description="fake")
    assert seen["quick"] is False and seen["out"] == str(Path("results") / "fakepaper")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--workers", "0"], "--workers must be >= 1, got 0"),
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--quick", "--full"], "not allowed with argument"),
        (["--data", "/no/such/file.csv"], "--data '/no/such/file.csv': no such file or folder"),
    ],
)
def test_bad_options_exit_2_and_run_nothing(argv, message, capsys):
    seen = {}
    with pytest.raises(SystemExit) as exc:
        run_reproduce(_fake(seen), argv, description="fake", data_help="a file")
    assert exc.value.code == 2 and message in capsys.readouterr().err and seen == {}


def test_no_data_option_unless_the_paper_takes_one(capsys):
    with pytest.raises(SystemExit) as exc:
        run_reproduce(_fake({}, takes_data=False), ["--data", "x"], description="fake")
    assert exc.value.code == 2 and "unrecognized arguments: --data x" in capsys.readouterr().err


def test_data_option_defaults_to_what_the_paper_declares(tmp_path, capsys):
    seen = {}
    paper = _fake(seen)
    paper.DATA_HELP = "a war-logs CSV file (declared)"
    with pytest.raises(SystemExit) as exc:
        run_reproduce(paper, ["--help"], description="fake")
    assert exc.value.code == 0 and "a war-logs CSV file (declared)" in capsys.readouterr().out
    run_reproduce(paper, ["--data", str(tmp_path), "--out", str(tmp_path / "o")], description="fake")
    assert seen["data_path"] == str(tmp_path)
    # an explicit help text wins; None leaves the option out even when the paper declares one
    with pytest.raises(SystemExit) as exc:
        run_reproduce(paper, ["--help"], description="fake", data_help="the script's own words")
    out = capsys.readouterr().out
    assert "the script's own words" in out and "(declared)" not in out
    with pytest.raises(SystemExit) as exc:
        run_reproduce(paper, ["--data", "x"], description="fake", data_help=None)
    assert exc.value.code == 2 and "unrecognized arguments: --data x" in capsys.readouterr().err
    with pytest.raises(TypeError, match="data_help must be a string, None or DECLARED, got 3"):
        run_reproduce(paper, [], description="fake", data_help=3)


def test_missing_data_found_during_the_run_is_a_usage_error(tmp_path, capsys):
    module = _fake({}, raises=FileNotFoundError("adult.data not found in /somewhere"))
    with pytest.raises(SystemExit) as exc:
        run_reproduce(module, ["--out", str(tmp_path)], description="fake", data_help="a folder")
    assert exc.value.code == 2 and "adult.data not found in /somewhere" in capsys.readouterr().err


# the paper scripts (scripts/ also holds tools such as redraw_figures.py)
PAPER_SCRIPTS = sorted(p.name for p in SCRIPTS.glob("*.py") if "run_reproduce" in p.read_text())


def test_every_paper_has_a_script():
    from pystanprivacy.experiments import PAPERS

    assert set(PAPERS) <= {Path(s).stem for s in PAPER_SCRIPTS}  # the filter above keeps every paper script


@pytest.mark.parametrize("script", PAPER_SCRIPTS)
def test_every_script_has_the_shared_options(script):
    out = subprocess.run([sys.executable, str(SCRIPTS / script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for option in ("--quick", "--full", "--out", "--seed", "--workers", "--no-progress"):
        assert option in out.stdout
    assert ("--data" in out.stdout) == (script in {"foulds2016_hmm.py", "kulkarni2022.py", "jewson2023.py"})


def test_full_refuses_a_missing_extra(tmp_path, capsys):
    seen = {}
    paper = _fake(seen)
    paper.FULL_EXTRAS = {"nets": ("dpsgd", lambda: False)}
    with pytest.raises(SystemExit) as info:
        run_reproduce(paper, ["--full", "--out", str(tmp_path / "o")], description="fake")
    assert info.value.code == 2 and not seen
    assert "part 'nets' of fakepaper needs the optional extra [dpsgd]" in capsys.readouterr().err
    run_reproduce(paper, ["--full", "--without-extras", "--out", str(tmp_path / "o")], description="fake")
    assert seen["quick"] is False
