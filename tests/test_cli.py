"""The command line: ``pystanprivacy models``, ``pystanprivacy reproduce`` (errors and one
end-to-end quick run) and ``python -m pystanprivacy``."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from pystanprivacy import cli, experiments
from pystanprivacy.experiments import get_paper, known_papers
from pystanprivacy.models import registry
from pystanprivacy.run.options import missing_full_extras


def test_reproduce_unknown_paper_exits_2_listing_known_papers(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["reproduce", "nosuchpaper", "--quick"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown paper 'nosuchpaper'" in err and re.search(r"known papers: (\w+, )*foulds2016", err)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "foulds2016", "--quick", "--full"], "not allowed with argument"),
        (["reproduce", "foulds2016", "--workers", "0"], "--workers must be >= 1"),
        (["reproduce", "foulds2016", "--seed", "-3"], "--seed must be >= 0"),
        (["reproduce"], "PAPER"),
        ([], "COMMAND"),
    ],
)
def test_bad_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_models_lists_every_registered_model_with_its_class(capsys):
    assert cli.main(["models"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    names = [line for line in lines if not line.startswith(" ")]
    assert names == registry.model_names() and "foulds2016/beta_bernoulli_ops" in names
    for name in names:  # the line after a model's name is its class, which imports as the registry's class
        line = lines[lines.index(name) + 1]
        assert line.startswith("    class: pystanprivacy.models."), line
        module, _, attribute = line.removeprefix("    class: ").rpartition(".")
        assert getattr(importlib.import_module(module), attribute) is registry.model_class(name)
    assert f"{len(names)} model(s)" in captured.err


def test_models_shows_json_metadata_beside_the_stan_file(tmp_path, monkeypatch, capsys):
    stan_file = tmp_path / "foulds2016" / "beta_bernoulli.stan"
    stan_file.parent.mkdir()
    stan_file.write_text("// placeholder\n")
    stan_file.with_suffix(".json").write_text(
        json.dumps(
            {
                "paper": "Foulds et al. 2016",
                "equations": ["16", "17"],
                "privacy": "eps-DP (Laplace)",
                "x": 1,
                "python": "pystanprivacy.models.foulds2016:BetaBernoulli",
            }
        )
    )
    real = registry.model_file
    monkeypatch.setattr(
        registry, "model_file", lambda name: stan_file if name == "foulds2016/beta_bernoulli" else real(name)
    )
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    block = out.split("foulds2016/beta_bernoulli\n", 1)[1]
    assert block.startswith(
        "    class: pystanprivacy.models.foulds2016.BetaBernoulli\n    paper: Foulds et al. 2016\n"
        "    equations: 16, 17\n    privacy: eps-DP (Laplace)\n"
    )
    assert "x: 1" not in out  # only the class and paper / equations / privacy are shown
    # a broken entry is shown and makes the exit code 1; the other models are still listed
    for text, message in (("[1, 2]", "must hold a JSON object"), ('{"paper": "p"}', "'python' must name")):
        stan_file.with_suffix(".json").write_text(text)
        assert cli.main(["models"]) == 1
        captured = capsys.readouterr()
        assert message in captured.out and "foulds2016/beta_bernoulli_ops\n    class: " in captured.out
        assert "broken registry entries: foulds2016/beta_bernoulli" in captured.err


def test_python_dash_m_runs_the_cli():
    proc = subprocess.run(
        [sys.executable, "-m", "pystanprivacy", "models"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "foulds2016/beta_bernoulli_ops" in proc.stdout.splitlines()
    proc = subprocess.run(
        [sys.executable, "-m", "pystanprivacy", "reproduce", "nope"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and re.search(r"known papers: (\w+, )*foulds2016", proc.stderr)


def test_reproduce_foulds2016_quick_end_to_end(
    tmp_path, capsys, monkeypatch, beta_bernoulli_model, beta_bernoulli_ops_model, nb_hmm_model, nb_hmm_ops_model
):
    # the quick beta-Bernoulli reproduction in this process (about a minute once the models
    # are compiled) and the HMM study at the miniature size of tests/experiments/test_hmm_experiments.py;
    # the paper's own parts (the supplementary studies' dispatch: tests/run/test_reproduce_parts.py)
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "experiments"))  # the tests mirror the package
    from test_hmm_experiments import TINY

    from pystanprivacy.experiments.foulds2016 import hmm as foulds2016_hmm

    monkeypatch.setattr(foulds2016_hmm, "QUICK", TINY)
    out = tmp_path / "results"
    parts = "beta_bernoulli,hmm,hmm_occupancy"
    argv = ["reproduce", "foulds2016", "--quick", "--parts", parts, "--out", str(out), "--seed", "3", "--no-progress"]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    for name in ("states", "heldout", "preprocessing"):
        assert f"foulds2016_hmm_{name}.csv" in printed
    assert (out / "foulds2016_hmm_heldout.png").is_file()
    assert str(out.resolve()) in printed
    tables = ("figure1", "figure2", "figure2_summary", "theorems", "theorems_summary", "adversarial")
    for name in tables:
        csv, sidecar = out / f"foulds2016_{name}.csv", out / f"foulds2016_{name}.json"
        assert csv.stat().st_size > 100, name
        meta = json.loads(sidecar.read_text())
        assert meta["args"]["quick"] is True and meta["args"]["workers"] == 1
        assert meta["versions"]["numpy"] and meta["stan_backend"]["name"] in ("pystan", "cmdstanpy")
        if name != "adversarial":
            assert meta["seed"] == 3
        assert f"foulds2016_{name}.csv" in printed
    for fig in ("figure1", "figure2", "theorems", "adversarial"):
        png = out / f"foulds2016_{fig}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", fig
    fig2 = json.loads((out / "foulds2016_figure2.json").read_text())
    assert fig2["args"]["repeats"] == 100 and fig2["args"]["epsilon"] == 0.1
    import pandas as pd

    summary = pd.read_csv(out / "foulds2016_figure2_summary.csv")
    assert set(summary["method"]) == {"non-private", "laplace", "ops"}
    assert "n_refused" in summary.columns


def test_default_out_dir_is_results_paper(monkeypatch, tmp_path):
    seen = {}

    class Fake:
        @staticmethod
        def reproduce(out, **kwargs):
            seen["out"], seen["kwargs"] = Path(out), kwargs
            Path(out).mkdir(parents=True)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: Fake)
    assert cli.main(["reproduce", "foulds2016", "--full", "--workers", "2", "--seed", "9"]) == 0
    assert seen["out"] == Path("results") / "foulds2016"
    assert seen["kwargs"] == {"quick": False, "seed": 9, "workers": 2, "progress": True}
    # a quick run never writes into (or resumes from) the committed full-scale results
    assert cli.main(["reproduce", "foulds2016", "--quick"]) == 0
    assert seen["out"] == Path("results-quick") / "foulds2016" and seen["kwargs"]["quick"] is True


def test_data_option_reaches_papers_that_take_it(monkeypatch, tmp_path, capsys):
    seen = {}

    class TakesData:
        DATA_HELP, PARTS = "a war-logs file", None

        @staticmethod
        def reproduce(out, *, quick, seed, workers, progress, data_path=None):
            seen["data_path"] = data_path
            Path(out).mkdir(parents=True)

    class NoData:
        DATA_HELP, PARTS = None, None

        @staticmethod
        def reproduce(out, *, quick, seed, workers, progress):
            raise AssertionError("must not run")

    logs = tmp_path / "logs.csv"
    logs.write_text("DateOccurred\n")
    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: TakesData)
    assert cli.main(["reproduce", "foulds2016", "--data", str(logs), "--out", str(tmp_path / "a")]) == 0
    assert seen["data_path"] == str(logs)
    with pytest.raises(SystemExit) as exc:
        cli.main(["reproduce", "foulds2016", "--data", str(tmp_path / "missing.csv")])
    assert exc.value.code == 2 and "no such file or folder" in capsys.readouterr().err
    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: NoData)
    with pytest.raises(SystemExit) as exc:
        cli.main(["reproduce", "bernstein2018", "--data", str(logs)])
    assert exc.value.code == 2 and "--data is not used by paper 'bernstein2018'" in capsys.readouterr().err


def test_missing_data_file_found_by_a_run_exits_2_with_the_loaders_message(monkeypatch, tmp_path, capsys):
    class NeedsFile:
        DATA_HELP, PARTS = "kosarak.dat or its folder", None

        @staticmethod
        def reproduce(out, *, quick, seed, workers, progress, data_path=None):
            raise FileNotFoundError(f"kosarak.dat not found in {data_path}; get it from the FIMI repository")

    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: NeedsFile)
    with pytest.raises(SystemExit) as exc:
        cli.main(["reproduce", "kulkarni2022", "--data", str(tmp_path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"kosarak.dat not found in {tmp_path}" in err and "Traceback" not in err


# ------------------------------------------------------------------- the paper protocol
PROTOCOL_DEFAULTS = {"quick": True, "seed": 0, "workers": 1, "progress": True, "data_path": None}


@pytest.mark.parametrize("paper", known_papers())
def test_every_paper_follows_the_protocol(paper, tmp_path):
    # what pystanprivacy.experiments documents and the command line relies on, without running anything
    module = get_paper(paper)
    assert module.PAPER == paper
    assert module.DATA_HELP is None or (isinstance(module.DATA_HELP, str) and "../" not in module.DATA_HELP)
    params = inspect.signature(module.reproduce).parameters
    assert next(iter(params)) == "out_dir"
    for name, default in PROTOCOL_DEFAULTS.items():
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY and params[name].default == default, name
    # a paper with parts takes them; one without has no other argument
    assert ("parts" in params) == (module.PARTS is not None)
    assert set(params) <= {"out_dir", *PROTOCOL_DEFAULTS, "parts"}
    if module.DATA_HELP is None:  # a paper that reads no data refuses a data_path before running anything
        with pytest.raises(ValueError, match="data_path"):
            module.reproduce(tmp_path / "out", data_path=tmp_path)
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"DATA_HELP": ...}, "DATA_HELP is missing"),
        ({"PARTS": ...}, "PARTS is missing"),
        ({"DATA_HELP": ""}, "DATA_HELP must be a non-empty string or None, got ''"),
        ({"PARTS": ["a"]}, r"PARTS must be a non-empty tuple of names or None, got \['a'\]"),
        ({"PARTS": ()}, r"PARTS must be a non-empty tuple of names or None, got \(\)"),
        ({"PAPER": "other"}, "PAPER must be 'fakepaper', got 'other'"),
        ({"reproduce": ...}, "it has no reproduce function"),
    ],
)
def test_get_paper_checks_the_protocol(monkeypatch, change, message):
    module = types.ModuleType("fake_paper_package")
    declared = {"PAPER": "fakepaper", "DATA_HELP": None, "PARTS": None, "reproduce": lambda out_dir, **kw: {}}
    for key, value in {**declared, **change}.items():
        if value is not ...:
            setattr(module, key, value)
    monkeypatch.setitem(sys.modules, "fake_paper_package", module)
    monkeypatch.setitem(experiments.PAPERS, "fakepaper", "fake_paper_package")
    with pytest.raises(TypeError, match=f"fake_paper_package does not follow the paper protocol.*{message}"):
        experiments.get_paper("fakepaper")
    for key, value in declared.items():
        setattr(module, key, value)
    assert experiments.get_paper("fakepaper") is module
    with pytest.raises(ValueError, match="unknown paper 'nope'; known papers: .*fakepaper"):
        experiments.get_paper("nope")


def test_data_and_parts_help_come_from_the_papers(capsys):
    text = cli.data_help()
    for paper in known_papers():
        declared = get_paper(paper).DATA_HELP
        assert (f"{paper}: {declared}" in text) if declared is not None else (f"{paper}:" not in text)
    assert "../" not in text and "$PYSTANPRIVACY_DATA, then the repository's data/ folder" in text
    assert "foulds2016: beta_bernoulli, hmm" in cli.parts_help()
    assert "bernstein2018: calibration, exponential_modes" in cli.parts_help()
    with pytest.raises(SystemExit) as info:
        cli.main(["reproduce", "--help"])
    assert info.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    assert " ".join(text.split()) in shown and " ".join(cli.parts_help().split()) in shown


def test_data_for_a_paper_that_reads_none_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["reproduce", "bernstein2018", "--data", str(tmp_path), "--out", str(tmp_path / "o")])
    assert info.value.code == 2
    assert "--data is not used by paper 'bernstein2018': it reads no data file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- audit
@pytest.mark.parametrize(
    "argv, message",
    [
        (["audit", "--mechanism", "nope"], "unknown mechanism 'nope'; valid mechanisms: laplace, gaussian"),
        (["audit", "--model", "nope"], "unknown model 'nope'; valid models: foulds2016_beta_bernoulli_ops"),
        (["audit", "--model", "laplace"], "unknown model 'laplace'"),
        (["audit", "--mechanism", "laplace", "--model", "jewson2023_logistic"], "not allowed with argument"),
        (["audit", "--seed", "-1"], "--seed must be >= 0"),
    ],
)
def test_audit_bad_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_audit_one_mechanism_prints_the_table_and_writes_csv_json(tmp_path, capsys):
    assert cli.main(["audit", "--mechanism", "randomized_response", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| name | kind | claimed ε | δ | empirical ε lower bound (95 %) | samples | verdict |" in out
    assert re.search(r"\| randomized_response \| mechanism \| 1 \| 0 \| 0\.9\d\d \| 100000 \| pass \|", out)
    import pandas as pd

    table = pd.read_csv(tmp_path / "audit.csv")
    assert list(table["name"]) == ["randomized_response"] and bool(table["passed"][0])
    side = json.loads((tmp_path / "audit.json").read_text())
    assert side["args"]["quick"] is True and side["args"]["broken"] is False and side["seed"] == 0


def test_audit_broken_variant_is_caught_exit_0(tmp_path, capsys):
    assert cli.main(["audit", "--mechanism", "oue", "--quick", "--broken", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\| oue \(broken\) \| mechanism \| 1 \| 0 \| 1\.9\d\d \| 100000 \| caught \|", out)
    assert (tmp_path / "audit_broken.csv").is_file()


def test_audit_exit_code_1_when_a_claim_fails(monkeypatch, capsys):
    # a registry entry whose claim (eps = 0.5) is below the mechanism's true eps (1): the
    # audit must report the failure and exit 1
    import dataclasses

    from pystanprivacy.models import audits

    fake = dataclasses.replace(audits.AUDITS["laplace"], name="overclaimed_laplace", epsilon=0.5)
    monkeypatch.setitem(audits.AUDITS, "overclaimed_laplace", fake)
    assert cli.main(["audit", "--mechanism", "overclaimed_laplace", "--quick"]) == 1
    captured = capsys.readouterr()
    assert "| overclaimed_laplace | mechanism | 0.5 |" in captured.out and "| FAIL |" in captured.out
    assert "1 audit(s) FAILED (epsilon_lb > claimed epsilon): overclaimed_laplace" in captured.err


def test_audit_states_its_wall_time_with_the_time_on_stan_models(
    tmp_path, capsys, monkeypatch, beta_bernoulli_ops_model
):
    """Issue 17: the audit's wall time includes finding or compiling its Stan models, and says
    how much of it that was (a cold cache costs a compile of ~30-90 s per OPS model)."""
    from pystanprivacy.sampling.stan import StanModel

    monkeypatch.setattr(StanModel, "_instances", {})  # this process loads the model again (from the cache)
    assert cli.main(["audit", "--model", "foulds2016_beta_bernoulli_ops", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    found = re.search(
        r"done in ([\d.]+) s wall: (\d+) Stan model\(s\) compiled \(([\d.]+) s\), (\d+) loaded from the "
        r"cache, ([\d.]+) s in all on models; ([\d.]+) s auditing",
        out,
    )
    assert found, out[-500:]
    wall, compiled, _, loaded, on_models, auditing = (float(g) for g in found.groups())
    assert compiled + loaded >= 1 and 0 <= on_models <= wall
    assert abs(wall - on_models - auditing) < 0.2
    side = json.loads((tmp_path / "audit.json").read_text())
    assert abs(side["args"]["wall_seconds"] - wall) < 0.1 and side["args"]["model_seconds"] > 0


def test_full_refuses_parts_whose_extra_is_missing(monkeypatch, tmp_path, capsys):
    """--full with a part whose comparison needs a missing optional extra (Jewson's network
    parts need [dpsgd] for their DP-SGD rows) stops before anything runs: its saved tasks
    would otherwise lack those rows on every resumed run. --without-extras runs it; other
    parts, quick runs and an installed extra are not affected."""
    jewson = get_paper("jewson2023")
    calls = []

    def fake(out, **kwargs):
        Path(out).mkdir(parents=True, exist_ok=True)
        calls.append(kwargs)

    monkeypatch.setattr(jewson, "reproduce", fake)
    monkeypatch.setitem(jewson.FULL_EXTRAS, "nn_regression", ("dpsgd", lambda: False))
    out = tmp_path / "o"
    for argv in (
        ["reproduce", "jewson2023", "--full", "--parts", "logistic,nn_regression", "--out", str(out)],
        ["reproduce", "all", "--full", "--out", str(out)],
    ):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2 and not calls and not out.exists()
        err = capsys.readouterr().err
        assert "part 'nn_regression' of jewson2023 needs the optional extra [dpsgd]" in err
        assert "pip install 'pystanprivacy[dpsgd]'" in err and "--without-extras" in err
    base = ["reproduce", "jewson2023", "--no-resume", "--out", str(out)]
    assert cli.main(base + ["--full", "--parts", "logistic"]) == 0
    assert cli.main(base + ["--full", "--parts", "nn_regression", "--without-extras"]) == 0
    assert cli.main(base + ["--quick", "--parts", "nn_regression"]) == 0
    monkeypatch.setitem(jewson.FULL_EXTRAS, "nn_regression", ("dpsgd", lambda: True))
    assert cli.main(base + ["--full", "--parts", "nn_regression"]) == 0
    assert [(c["quick"], c["parts"]) for c in calls] == [
        (False, ("logistic",)),
        (False, ("nn_regression",)),
        (True, ("nn_regression",)),
        (False, ("nn_regression",)),
    ]


def test_missing_full_extras_lists_only_selected_uninstalled_parts():
    paper = types.SimpleNamespace(PAPER="p", FULL_EXTRAS={"a": ("x", lambda: False), "b": ("y", lambda: True)})
    assert missing_full_extras(paper) == ["part 'a' of p needs the optional extra [x] (pip install 'pystanprivacy[x]')"]
    assert missing_full_extras(paper, ("b",)) == []
    assert missing_full_extras(types.SimpleNamespace(PAPER="q")) == []


# ------------------------------------------------ paths checked before any work (issue 53, item 9)
def _must_not_run(*args, **kwargs):
    raise AssertionError("the work started although a path was unusable")


def _usage_error(argv, capsys, *says):
    """``main(argv)`` exits 2 with an argparse error line that says each of ``says``; no traceback."""
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert "Traceback" not in err
    line = [x for x in err.splitlines() if ": error: " in x]
    assert len(line) == 1, err
    for text in says:
        assert text in line[0], line[0]
    return line[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_data_on_a_fifo_is_a_usage_error_naming_it(monkeypatch, tmp_path, capsys):
    """Was: the war-logs loader said "(not found)" in a ValueError traceback."""
    fifo = tmp_path / "logs.csv"
    os.mkfifo(fifo)
    monkeypatch.setattr(get_paper("foulds2016"), "reproduce", _must_not_run)
    _usage_error(
        ["reproduce", "foulds2016", "--data", str(fifo), "--out", str(tmp_path / "o")],
        capsys,
        f"--data {str(fifo)!r}: is a FIFO",
    )
    assert not (tmp_path / "o").exists()


def test_data_that_the_papers_loader_cannot_read_is_a_usage_error_before_the_run(monkeypatch, tmp_path, capsys):
    """Was: a traceback from the loader, for foulds2016 after its other parts had run."""
    text = tmp_path / "garbage.csv"
    text.write_text('hello,world\n1,2,3\n"unterminated\n')
    binary = tmp_path / "garbage.bin"
    binary.write_bytes(bytes(range(256)) * 8)
    folder = tmp_path / "uci"
    folder.mkdir()
    (folder / "adult.data").write_bytes(bytes(range(128, 256)) * 8)
    for paper in ("foulds2016", "kulkarni2022", "jewson2023"):
        monkeypatch.setattr(get_paper(paper), "reproduce", _must_not_run)
    out = str(tmp_path / "o")
    _usage_error(
        ["reproduce", "foulds2016", "--data", str(text), "--out", out],
        capsys,
        f"--data {str(text)!r}: foulds2016 cannot read it: the war-logs file lacks the required column",
    )
    _usage_error(
        ["reproduce", "kulkarni2022", "--data", str(text), "--out", out],
        capsys,
        f"--data {str(text)!r}: kulkarni2022 cannot read it:",
        "line 1 is not a space-separated list",
    )
    line = _usage_error(
        ["reproduce", "kulkarni2022", "--data", str(binary), "--out", out],
        capsys,
        "kulkarni2022 cannot read it: it is not a text file in the expected encoding",
    )
    assert "0x" not in line  # the decoder's own message quotes a byte of the file
    _usage_error(
        ["reproduce", "jewson2023", "--data", str(folder), "--out", out],
        capsys,
        f"--data {str(folder)!r}: jewson2023 cannot read it: it is not a text file",
    )
    _usage_error(
        ["reproduce", "jewson2023", "--data", str(text), "--out", out],
        capsys,
        "jewson2023 cannot read it: it must be a folder holding abalone.data, adult.data",
    )
    assert not (tmp_path / "o").exists()


def test_reproduce_out_an_existing_file_is_a_usage_error(monkeypatch, tmp_path, capsys):
    """Was: FileExistsError traceback."""
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    monkeypatch.setattr(get_paper("foulds2016"), "reproduce", _must_not_run)
    for paper in ("foulds2016", "all"):
        if paper == "all":
            for name in known_papers():
                monkeypatch.setattr(get_paper(name), "reproduce", _must_not_run)
        _usage_error(
            ["reproduce", paper, "--quick", "--out", str(taken)],
            capsys,
            f"--out {str(taken)!r}: exists and is not a folder",
        )
        _usage_error(
            ["reproduce", paper, "--quick", "--out", str(taken / "below")],
            capsys,
            f"--out {str(taken / 'below')!r}: cannot be created, {str(taken)!r} is not a folder",
        )
    assert taken.read_text() == "not a folder"


def test_audit_out_is_checked_before_the_audit_runs(monkeypatch, tmp_path, capsys):
    """Was: the whole audit ran (minutes), then writing its table failed with a traceback."""
    from pystanprivacy.models import audits

    monkeypatch.setattr(audits, "run_audits", _must_not_run)
    taken = tmp_path / "taken.csv"
    taken.write_text("x")
    base = ["audit", "--mechanism", "laplace", "--quick", "--out"]
    _usage_error(base + [str(taken)], capsys, f"--out {str(taken)!r}: exists and is not a folder")
    _usage_error(base + [str(taken / "sub")], capsys, f"--out {str(taken / 'sub')!r}: cannot be created")
    if Path("/proc/self").is_dir():  # a place nobody can create a folder in, root included
        _usage_error(
            base + ["/proc/pystanprivacy-audit"], capsys, "--out '/proc/pystanprivacy-audit': cannot write there"
        )
    if hasattr(os, "geteuid") and os.geteuid() != 0:  # root writes through permission bits
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        _usage_error(base + [str(locked / "o")], capsys, "cannot write there")
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    _usage_error(base + [str(link)], capsys, "is a broken symbolic link")
    # the run's mkdir(parents=True) would fail on the link with FileExistsError
    _usage_error(base + [str(link / "out")], capsys, f"{str(link)!r} is a broken symbolic link")
    _usage_error(base + [""], capsys, "--out is empty")  # Path("") is the working directory
    _usage_error(base + [str(tmp_path / ("x" * 300))], capsys, "cannot be used (File name too long)")


def test_the_out_check_leaves_nothing_behind(monkeypatch, tmp_path, capsys):
    """A writable --out passes the check without being created by it (the run creates it)."""
    seen = {}

    def fake(out, **kwargs):
        seen["existed"] = Path(out).exists()
        Path(out).mkdir(parents=True, exist_ok=True)

    monkeypatch.setattr(get_paper("bernstein2018"), "reproduce", fake)
    out = tmp_path / "new" / "deeper"
    assert cli.main(["reproduce", "bernstein2018", "--quick", "--no-resume", "--out", str(out)]) == 0
    assert seen == {"existed": False}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["deeper"]


def test_data_with_parts_that_do_not_read_it_is_a_usage_error_before_the_run(monkeypatch, tmp_path, capsys):
    """Was: ``reproduce foulds2016 --data F --parts beta_bernoulli`` ended in the paper's ValueError
    traceback ("data_path is a war-logs file for the HMM study ...")."""
    data = Path(__file__).parent / "data" / "warlogs_iraq_small.csv"
    for paper in ("foulds2016", "kulkarni2022"):
        monkeypatch.setattr(get_paper(paper), "reproduce", _must_not_run)
    _usage_error(
        ["reproduce", "foulds2016", "--data", str(data), "--parts", "beta_bernoulli", "--out", str(tmp_path / "o")],
        capsys,
        "--data is read only by the part(s) hmm, hmm_occupancy of foulds2016; "
        "--parts 'beta_bernoulli' runs none of them",
    )
    _usage_error(
        ["reproduce", "kulkarni2022", "--data", str(data), "--parts", "calibration", "--out", str(tmp_path / "o")],
        capsys,
        "--data is read only by the part(s) kosarak of kulkarni2022",
    )
    assert not (tmp_path / "o").exists()
