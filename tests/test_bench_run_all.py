"""benchmarks/run_all.py: the suite's sections at their tiniest settings on cached small
models (foulds2016/beta_bernoulli, bernstein2018/binomial_beta and multinomial_dirichlet).
Checked: numbers that are derived from others are derived from the same record (ESS/s, s/1k
ESS, speed-up), an unavailable backend gets the backend's own reason and no numbers, a failing
reproduction is recorded with its exit code and makes the exit status non-zero, the output
comparison tells timing columns from results, and the report holds every section. No timing
is asserted. The subprocess part runs a cheap injected command, plus one real
``pystanprivacy reproduce`` call that fails at once (unknown paper)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
TINY_STAN = {"chains": 2, "warmup": 150, "draws": 150}
TINY_GIBBS = {"chains": 2, "burnin": 100, "iterations": 300}


@pytest.fixture(scope="module")
def suite():
    spec = importlib.util.spec_from_file_location("bench_run_all", BENCH / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run_all"] = module
    spec.loader.exec_module(module)
    yield module
    for name in ("bench_run_all", "bench_models", "bench_backend", "bench_bernstein2018"):
        sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def models(suite):
    return suite.models_section("foulds2016/beta_bernoulli", quick=True, sampler=TINY_STAN)


@pytest.fixture(scope="module")
def gibbs(suite):
    return suite.gibbs_section(repeats=2, datasets=(1,), stan=TINY_STAN, gibbs=TINY_GIBBS)


@pytest.fixture(scope="module")
def backend(suite):
    return suite.backend_section(repeats=1)


def _stamped(row):
    assert row["load1_start"] >= 0 and row["load1_end"] >= 0
    assert row["date"].endswith("+00:00")


def test_models_row(suite, models):
    (row,) = models["rows"]
    assert row["model"] == "foulds2016/beta_bernoulli"
    assert (row["n_small"], row["n_large"]) == (100, 100_000)  # the --quick sizes
    for size in ("small", "large"):
        assert row[f"s_per_1k_ess_{size}"] == pytest.approx(1000 * row[f"fit_s_{size}"] / row[f"min_ess_bulk_{size}"])
        assert 0 < row[f"min_ess_bulk_{size}"] <= TINY_STAN["chains"] * TINY_STAN["draws"] * 3  # antithetic at most ~3x
    assert row["load_s"] > 0 and row["proc_s"] > row["load_s"]
    assert models["fixed_cost"]["seconds"] > 0
    _stamped(row)
    md = suite.models_markdown(models)
    assert "| foulds2016/beta_bernoulli | 100 | 100000 |" in md
    assert "load1 start" in md and "2 chains x (150 + 150)" in md


def test_gibbs_side_by_side(suite, gibbs):
    assert [(r["model"], r["datasets"]) for r in gibbs["rows"]] == [("binomial", 1), ("multinomial", 1)]
    assert len(gibbs["runs"]) == 2 * 2 * 2  # models x methods x repeats
    for row in gibbs["rows"]:
        _stamped(row)
        for prefix, method in (("stan", "Stan (NUTS)"), ("gibbs", "Gibbs (Alg. 1)")):
            # ESS/s, ESS and seconds come from one recorded run: the one with the lower median ESS/s
            (rec,) = [
                r
                for r in gibbs["runs"]
                if r["model"] == row["model"] and r["method"] == method and r["rep"] == row[f"{prefix}_rep"]
            ]
            assert (row[f"{prefix}_s"], row[f"{prefix}_min_ess"]) == (rec["seconds"], rec["min_ess_bulk"])
            assert row[f"{prefix}_ess_per_s"] == rec["min_ess_bulk"] / rec["seconds"]
            both = sorted(r["ess_per_s"] for r in gibbs["runs"] if r["model"] == row["model"] and r["method"] == method)
            assert row[f"{prefix}_ess_per_s"] == both[0]
            assert row[f"{prefix}_min_ess"] > 10  # both samplers really mixed a little
        assert row["stan_over_gibbs"] == row["stan_ess_per_s"] / row["gibbs_ess_per_s"]
    md = suite.gibbs_markdown(gibbs)
    assert "| binomial | 1 |" in md and "| multinomial | 1 |" in md and "Gibbs 2 x (100 + 300)" in md


def test_backend_rows(suite, backend):
    from pystanprivacy.sampling.backends import BACKENDS

    rows = {r["backend"]: r for r in backend["rows"]}
    assert set(rows) == {"pystan", "cmdstanpy"}
    for row in rows.values():
        _stamped(row)
    assert rows["pystan"]["status"] == "ok"
    (run,) = rows["pystan"]["runs"]
    assert run["cached"] is True and run["draws"] == 4000
    for key in ("construct_s", "fit_s", "fixed_param_s", "wall_s"):
        assert rows["pystan"][key] == run[key] > 0
    why = BACKENDS["cmdstanpy"].availability()
    if why is None:  # CmdStan installed (the machine that checks the cmdstanpy backend): a row with numbers
        assert rows["cmdstanpy"]["status"] == "ok" and rows["cmdstanpy"]["fit_s"] > 0
        return
    assert rows["cmdstanpy"]["status"] == f"not available: {why}"
    assert not {"construct_s", "fit_s", "fixed_param_s", "wall_s", "runs"} & set(rows["cmdstanpy"])
    assert f"| cmdstanpy | not available: {why} |  |  |" in suite.backend_markdown(backend)


def test_unavailable_backend_has_no_numbers(suite, monkeypatch):
    from pystanprivacy.sampling.backends import BACKENDS

    reason = "no CmdStan installation found (test)"
    monkeypatch.setattr(BACKENDS["cmdstanpy"], "availability", classmethod(lambda cls: reason))
    (row,) = suite.backend_section(repeats=1, backends=("cmdstanpy",))["rows"]
    assert row["status"] == f"not available: {reason}"
    assert "runs" not in row and "fit_s" not in row


# A cheap stand-in for a reproduction: writes a results CSV (optionally depending on the
# worker count), a CSV column and a sidecar field that hold timings, and a figure.
FAKE = r"""
import json, sys, time
from pathlib import Path
out, workers, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
out.mkdir(parents=True)
t = time.perf_counter()
sum(i * i for i in range(200_000 if workers == 1 else 100_000))
value = 0.25 + (workers if mode == "worker-dependent" else 0)
(out / "paper_table.csv").write_text(f"epsilon,mean,seconds\n1.0,{value},{time.perf_counter() - t}\n")
(out / "paper_table.json").write_text(json.dumps({"args": {"workers": workers, "seconds": time.perf_counter() - t},
                                                  "created": time.time(), "rows": 1}))
(out / "paper_figure.png").write_bytes(b"\x89PNG fake")
"""


def _fake(mode):
    return lambda paper, m, workers, scheduler, out: [sys.executable, "-c", FAKE, str(out), str(workers), mode]


def test_compare_workers(suite, tmp_path):
    sec = suite.reproduce_section(["paperA"], compare_workers=True, command=_fake("same"), workdir=tmp_path)
    assert [(r["paper"], r["mode"], r["workers"], r["exit_code"]) for r in sec["runs"]] == [
        ("paperA", "quick", 1, 0),
        ("paperA", "quick", 2, 0),
    ]
    one, two = sec["runs"]
    for r in sec["runs"]:
        _stamped(r)
        assert r["wall_s"] > 0 and r["cpu_s"] > 0
    (cmp,) = sec["compare"]
    assert cmp["speedup"] == one["wall_s"] / two["wall_s"]
    assert (cmp["wall_s_1"], cmp["wall_s_2"]) == (one["wall_s"], two["wall_s"])
    assert cmp["csv_files"] == 1 and cmp["png_files"] == 1
    assert cmp["csv_identical_bytes"] is False  # the seconds column differs
    assert cmp["csv_identical_without_timing"] is True and cmp["timing_columns_ignored"] == ["seconds"]
    assert cmp["sidecars_identical"] is True and cmp["figures_identical"] is True
    assert suite.section_ok("reproduce", sec)
    assert not list(tmp_path.iterdir())  # the outputs were removed
    md = suite.reproduce_markdown(sec)
    assert "Workers 1 vs 2" in md and f"| {cmp['speedup']:.2f} |" in md

    empty_a, empty_b = tmp_path / "a", tmp_path / "b"
    empty_a.mkdir(), empty_b.mkdir()
    nothing = suite.compare_outputs(empty_a, empty_b)
    assert nothing["csv_files"] == 0 and nothing["csv_identical_without_timing"] is False

    bad = suite.reproduce_section(["paperA"], compare_workers=True, command=_fake("worker-dependent"))
    (cmp,) = bad["compare"]
    assert cmp["csv_identical_without_timing"] is False and cmp["csv_differ_without_timing"] == ["paper_table.csv"]
    assert not suite.section_ok("reproduce", bad)
    assert "results differ between 1 and 2 workers: paper_table.csv" in suite.reproduce_markdown(bad)


def test_reproduce_command_and_full_plan(suite, tmp_path):
    cmd = suite.reproduce_command("foulds2016", "full", 2, "local", tmp_path)
    assert cmd[:3] == [sys.executable, "-m", "pystanprivacy"]
    assert cmd[3:] == [
        "reproduce",
        "foulds2016",
        "--full",
        "--no-resume",
        "--no-progress",
        "--out",
        str(tmp_path),
        "--workers",
        "2",
        "--scheduler",
        "local",
    ]
    part = suite.reproduce_command("foulds2016:beta_bernoulli", "full", 1, None, tmp_path)
    assert part[3:6] == ["reproduce", "foulds2016", "--full"] and part[-2:] == ["--parts", "beta_bernoulli"]
    seen = []
    sec = suite.reproduce_section(
        ["p1", "p2"],
        full_papers=["p2"],
        workers=3,
        command=lambda *a: seen.append(a[:4]) or [sys.executable, "-c", "pass"],
    )
    assert seen == [("p1", "quick", 3, None), ("p2", "quick", 3, None), ("p2", "full", 3, None)]
    assert sec["compare"] == [] and suite.section_ok("reproduce", sec)
    # --compare-workers covers the full runs too
    seen.clear()
    sec = suite.reproduce_section(
        [],
        full_papers=["p2"],
        compare_workers=True,
        command=lambda *a: seen.append(a[:4]) or [sys.executable, "-c", "pass"],
    )
    assert seen == [("p2", "full", 1, None), ("p2", "full", 2, None)]
    assert [(c["paper"], c["mode"]) for c in sec["compare"]] == [("p2", "full")]


def test_failing_reproduction_and_report(suite, models, gibbs, backend, tmp_path):
    # the real CLI, which rejects an unknown paper at once (argparse: exit code 2)
    runners = {"models": lambda a: models, "gibbs": lambda a: gibbs, "backend": lambda a: backend}
    status = suite.main(["--out", str(tmp_path), "--papers", "nosuchpaper", "--quick"], runners=runners)
    assert status == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["exit_status"] == 1
    assert report["sections_ok"] == {"models": True, "gibbs": True, "backend": True, "reproduce": False}
    (run,) = report["sections"]["reproduce"]["runs"]
    assert run["exit_code"] == 2 and "unknown paper 'nosuchpaper'" in run["stderr_tail"]
    assert run["context"]["cpu_count"] and "pystanprivacy" in run["context"]["versions"]
    assert report["sections"]["gibbs"]["rows"][0]["context"]["machine"] == report["context"]["machine"]
    md = (tmp_path / "report.md").read_text()
    for title in suite.TITLES.values():
        assert f"## {title}" in md
    assert "| foulds2016/beta_bernoulli |" in md and "| multinomial | 1 |" in md and "| pystan | ok |" in md
    assert "| nosuchpaper | quick | 1 | none |" in md and "FAILED nosuchpaper quick (exit 2)" in md
    assert f"git commit: {report['context']['git_commit']}" in md


def test_skip_and_failing_section(suite, tmp_path):
    def boom(args):
        raise RuntimeError("gibbs exploded")

    status = suite.main(["--out", str(tmp_path), "--skip", "models,backend,reproduce"], runners={"gibbs": boom})
    assert status == 1
    md = (tmp_path / "report.md").read_text()
    assert md.count("skipped (--skip).") == 3 and "FAILED: `RuntimeError: gibbs exploded`" in md
    # a usage error inside a section is reported there, not a crash of the whole run
    status = suite.main(["--out", str(tmp_path), "--skip", "gibbs,backend,reproduce", "--models", "nosuch/*"])
    assert status == 1
    assert "FAILED: `SystemExit: --models 'nosuch/*' matches none of" in (tmp_path / "report.md").read_text()
    with pytest.raises(SystemExit):
        suite.parse_args(["--skip", "nosuchsection"])
