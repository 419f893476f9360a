"""The fits that set the time of ``reproduce kulkarni2022 --full`` (issue 67): each rewritten Stan
program (its text at git revision ``--after``; the working tree's program without it) against the
program it replaces (its text at ``--before``), each written to a private temporary folder and
compiled, on the same data, Stan seed and sampler settings,
alternating the two so that both see the same machine load.

* ``gaussian``: part ``calibration``'s Gaussian fits (5000 users, 4 chains x (500 + 500)), one
  per epsilon of the full study, on the data set of calibration run ``--run`` drawn exactly as
  ``calibration_task`` draws it (``bench_ldp_gradient.run_data``);
* ``logistic``: part ``regression``'s Figure 5 perturbed-inputs fits (Adult, the study's random
  10K subsample, d = 5, c = 0.5, 4 chains x (1000 + 1000)), one release per epsilon.

Chains run one at a time (``PYSTANPRIVACY_PARALLEL_CHAINS=1`` unless set), so a fit's wall time is
about the CPU time it takes from one of the two workers of a full run. For each fit: wall time of
the Stan run, mean leapfrog steps per iteration, milliseconds per gradient (the run's fixed cost
included), min bulk ESS, divergences and the 1-minute load average.

Run::

    python benchmarks/bench_kulkarni2022_full.py [--models gaussian,logistic] [--epsilons-gaussian 0.1,0.3,1,3,10]
        [--epsilons-logistic 2] [--run 0] [--before a1ba80bd] [--after f42205bf]

The Gaussian rewrite (``kulkarni2022/gaussian``, 48c89b33) is in the working tree: part
``calibration`` is rerun on it (its tasks must be rerun anyway). The logistic-inputs rewrite
(``kulkarni2022/logistic_regression_inputs``, f42205bf) is not: it changes that program's hash and
so re-keys Figure 5's 210 committed tasks, and waits for their rerun (results/RUNLOG.md,
2026-12-07). ``--after f42205bf`` measures it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("PYSTANPRIVACY_PARALLEL_CHAINS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_models, bench_ldp_gradient

#: model -> (Stan program, parameters whose min bulk ESS is reported)
PROGRAMS = {
    "gaussian": ("kulkarni2022/gaussian", ("mu", "sigma")),
    "logistic": ("kulkarni2022/logistic_regression_inputs", ("theta", "Sigma")),
}
#: the revision before the rewrites of issue 67
BEFORE = "a1ba80bd"


def before_program(name: str, revision: str, folder: Path, label: str = "before"):
    """The program ``name`` as it was at ``revision``, compiled from a file in ``folder``."""
    from pystanprivacy.sampling.stan import StanModel

    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:stan/{name}.stan"], check=True, capture_output=True, text=True
    ).stdout
    path = folder / f"{name.replace('/', '_')}_{label}.stan"
    path.write_text(text)
    return StanModel.get(str(path))


def _row(model: str, epsilon: float, label: str, post, sampler: dict, params) -> dict:
    from bench_models import run_costs

    ess = post.ess_bulk()
    c = run_costs(post, sampler, min(float(np.nanmin(ess[p])) for p in params))
    return {
        "model": model,
        "epsilon": epsilon,
        "program": label,
        "fit_s": c["fit_s"],
        "leapfrog/iter": c["leapfrog_per_iter"],
        "ms/grad": c["ms_per_grad"],
        "min_ess": c["min_ess_bulk"],
        "div": c["divergences"],
        "load1": os.getloadavg()[0],
    }


def gaussian_cases(epsilons, run: int):
    from bench_ldp_gradient import run_data

    from pystanprivacy.experiments.kulkarni2022 import study

    sampler = study.check_sampler(study.FULL["sampler"])
    for e in epsilons:
        data, _, _ = run_data(run, e)
        yield e, data, sampler


def logistic_cases(epsilons, seed: int = 0):
    from pystanprivacy.experiments.kulkarni2022 import regression
    from pystanprivacy.experiments.kulkarni2022.data import regression_data
    from pystanprivacy.models.kulkarni2022_regression import LogisticRegressionInputs

    adult = regression_data("adult", d=5, seed=seed)
    pick = np.random.default_rng(np.random.SeedSequence([seed, 5])).permutation(adult.x_train.shape[0])
    pick = pick[: regression.FULL["subsample"]]
    model = LogisticRegressionInputs()
    for e in epsilons:
        rng = np.random.default_rng([seed, int(e * 1000)])
        release = model.release(adult.x_train[pick], adult.y_train[pick], epsilon=e, c=0.5, R=adult.R, seed=rng)
        yield e, model.data(release), dict(regression.FULL["sampler"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="gaussian,logistic")
    parser.add_argument("--epsilons-gaussian", default="0.1,0.3,1,3,10")
    parser.add_argument("--epsilons-logistic", default="2")
    parser.add_argument("--run", type=int, default=0, help="the Gaussian calibration run whose data are fitted")
    parser.add_argument("--before", default=BEFORE, help="git revision of the programs before the rewrites")
    parser.add_argument(
        "--after", default=None, help="git revision of the rewritten programs (default: the working tree)"
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # seeded releases: "reproducible, not secure"
    import pandas as pd

    from pystanprivacy.sampling.stan import StanModel

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        for model in args.models.split(","):
            name, params = PROGRAMS[model]
            after = StanModel.get(name) if args.after is None else before_program(name, args.after, Path(tmp), "after")
            programs = {"before": before_program(name, args.before, Path(tmp)), "after": after}
            if model == "gaussian":
                cases = gaussian_cases([float(e) for e in args.epsilons_gaussian.split(",")], args.run)
            else:
                cases = logistic_cases([float(e) for e in args.epsilons_logistic.split(",")])
            for k, (e, data, sampler) in enumerate(cases):
                for label in ("before", "after") if k % 2 == 0 else ("after", "before"):
                    post = programs[label].sample(data, seed=1000 + k, **sampler)
                    rows.append(_row(model, e, label, post, sampler, params))
                    print(pd.DataFrame(rows[-1:]).round(4).to_string(index=False, header=len(rows) == 1), flush=True)
    table = pd.DataFrame(rows)
    ratio = table.pivot_table(index=["model", "epsilon"], columns="program", values=["fit_s", "ms/grad"])
    print("\nbefore / after:")
    print((ratio.xs("before", axis=1, level=1) / ratio.xs("after", axis=1, level=1)).round(2).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
