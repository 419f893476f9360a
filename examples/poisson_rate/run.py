"""A model that is in none of the four papers, made noise-aware with the function library, end
to end: the data owner releases, publishes a file, an analyst fits it with ``pystanprivacy fit``,
checks the model's calibration with ``pystanprivacy sbc``, and compares naive and noise-aware
posteriors in a plot.

    python examples/poisson_rate/run.py --out poisson_rate_out            # under 2 minutes
    python examples/poisson_rate/run.py --out /tmp/pr --quick             # the test's small size

Steps (each command is printed as it would be typed in a shell):

1. data owner: the true counts of cases in G = 4 regions (simulated here from the model's prior),
   released with the Laplace mechanism (secure discrete noise, charged to an accountant), saved
   as ``release.json`` (:meth:`Release.save`); the public exposures go to ``data.json``;
2. analyst: ``pystanprivacy fit poisson_rate.stan release.json --data data.json --out fit`` and
   the same for the naive program, which ignores the noise;
3. analyst: ``pystanprivacy sbc poisson_rate.stan --simulator poisson_rate_sim.py ...`` for both
   programs: the noise-aware one passes, the naive one fails;
4. a plot of the naive and noise-aware posteriors of each region's rate
   (``naive_vs_noise_aware.png``).

The analyst's steps read only ``release.json`` and ``data.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
AWARE = HERE / "poisson_rate.stan"
NAIVE = HERE / "poisson_rate_naive.stan"
SIMULATOR = HERE / "poisson_rate_sim.py"


def _simulator() -> Any:
    spec = importlib.util.spec_from_file_location("poisson_rate_sim", SIMULATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _command(argv: list[str]) -> int:
    """Run ``pystanprivacy ARGV`` in this process, printing it as a shell command first."""
    from pystanprivacy import cli

    print("$ pystanprivacy " + " ".join(shlex.quote(a) for a in argv), flush=True)
    return cli.main(argv)


def data_owner(out: Path, *, epsilon: float, seed: int) -> dict[str, Any]:
    """Step 1: the private counts (simulated from the prior, the truth kept for the plot) and
    their release, published as ``out/release.json``; the public data as ``out/data.json``."""
    from pystanprivacy import PrivacyAccountant

    sim = _simulator()
    truth = sim.simulate(np.random.default_rng(seed))
    accountant = PrivacyAccountant(epsilon=epsilon)
    release = sim.release(truth["private"], epsilon=epsilon, accountant=accountant)  # secure: no seed
    release.save(out / "release.json")
    (out / "data.json").write_text(json.dumps(sim.public_data()))
    print(
        f"data owner: released {release.values.size} counts with {release.record.mechanism} noise of scale "
        f"{release.record.scale:g} (epsilon {epsilon:g}; spent {accountant.spent}) -> {out / 'release.json'}"
    )
    return truth


def analyst(
    out: Path, *, replicates: int, epsilon: float, warmup: int, draws: int, sbc_draws: int, seed: int
) -> dict[str, int]:
    """Steps 2 and 3: ``pystanprivacy fit`` and ``pystanprivacy sbc`` of both programs; their exit
    codes (sbc: 0 passes, 1 fails)."""
    codes = {}
    for tag, program in (("aware", AWARE), ("naive", NAIVE)):
        suffix = "" if tag == "aware" else "_naive"
        codes[f"fit{suffix}"] = _command(
            [
                "fit",
                str(program),
                str(out / "release.json"),
                "--data",
                str(out / "data.json"),
                "--out",
                str(out / f"fit{suffix}"),
                "--warmup",
                str(warmup),
                "--draws",
                str(draws),
                "--seed",
                str(seed),
            ]
        )
    for tag, program in (("aware", AWARE), ("naive", NAIVE)):
        suffix = "" if tag == "aware" else "_naive"
        codes[f"sbc{suffix}"] = _command(
            [
                "sbc",
                str(program),
                "--simulator",
                str(SIMULATOR),
                "--epsilon",
                str(epsilon),
                "--replicates",
                str(replicates),
                "--chains",
                "1",
                "--warmup",
                str(sbc_draws),
                "--draws",
                str(sbc_draws),
                "--seed",
                str(seed),
                "--out",
                str(out / f"sbc{suffix}"),
                "--no-progress",
            ]
        )
    return codes


def plot(out: Path, truth: dict[str, Any]) -> Path:
    """Step 4: per region, the 90 % interval and median of the rate under both posteriors, the
    true rate, and the naive point estimate (released count / exposure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pystanprivacy import Posterior, Release

    sim = _simulator()
    release = Release.load(out / "release.json")
    fig, ax = plt.subplots(figsize=(7.0, 3.9))
    groups = np.arange(release.values.size)
    for offset, tag, colour in ((-0.12, "fit_naive", "tab:red"), (0.12, "fit", "tab:blue")):
        lam = Posterior.load(out / tag / "posterior.nc").draws("lambda")
        lo, mid, hi = np.quantile(lam, [0.05, 0.5, 0.95], axis=0)
        ax.errorbar(
            groups + offset,
            mid,
            yerr=[mid - lo, hi - mid],
            fmt="o",
            color=colour,
            capsize=3,
            label="naive (ignores the noise)" if tag == "fit_naive" else "noise-aware",
        )
    ax.scatter(groups, truth["parameters"]["lambda"], marker="x", color="black", zorder=3, label="true rate")
    ax.scatter(
        groups,
        release.values / sim.EXPOSURE,
        marker="_",
        s=200,
        color="grey",
        zorder=3,
        label="released count / exposure",
    )
    ax.set_xticks(groups, [f"region {g + 1}" for g in groups])
    ax.set_ylabel("cases per 1000 person-years")
    ax.set_title(
        f"Poisson rates from Laplace-noised counts (epsilon = {release.record.epsilon:g}): 90 % intervals", fontsize=9
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4, frameon=False)
    fig.tight_layout()
    path = out / "naive_vs_noise_aware.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="poisson_rate_out", help="output folder (default ./poisson_rate_out)")
    parser.add_argument("--epsilon", type=float, default=0.25, help="epsilon of the release (default 0.25)")
    parser.add_argument("--replicates", type=int, default=None, help="SBC replicates (default 60; --quick 40)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulated truth and the fits (default 1)")
    parser.add_argument("--quick", action="store_true", help="small sizes (the test's): fewer draws and replicates")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    replicates = args.replicates or (40 if args.quick else 60)
    sizes = (
        {"warmup": 300, "draws": 500, "sbc_draws": 200}
        if args.quick
        else {"warmup": 1000, "draws": 1000, "sbc_draws": 200}
    )
    truth = data_owner(out, epsilon=args.epsilon, seed=args.seed)
    codes = analyst(out, replicates=replicates, epsilon=args.epsilon, seed=args.seed, **sizes)
    figure = plot(out, truth)
    print(f"exit codes: {codes}; plot: {figure}")
    return {"truth": truth, "codes": codes, "figure": figure, "out": out}


if __name__ == "__main__":
    result = main()
    sys.exit(0 if result["codes"] == {"fit": 0, "fit_naive": 0, "sbc": 0, "sbc_naive": 1} else 1)
