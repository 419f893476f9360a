"""Gallery: linear regression from noisy sufficient statistics of the user's own design.

The program and its simulator are in examples/ss_regression/. Run from the repository root:
    python docs/examples/gallery_ss_regression.py
It exits with 1 if the noise-aware program fails its SBC or the naive one passes.
"""

import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

from pystanprivacy import PrivacyAccountant, Release
from pystanprivacy.checks.sbc import Sampler, run_sbc
from pystanprivacy.models.custom import StanProgram

HERE = Path("examples/ss_regression")
EPSILON = 1.0


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sim = load(HERE / "ss_regression_sim.py")

# 1. The data owner: (X'y, y'y) of the clipped outcomes with the analytic Gaussian mechanism
#    (secure: no seed; L2 sensitivity from the clipping bound), published as a file.
truth = sim.simulate(np.random.default_rng(2026))  # outcomes drawn from the prior
accountant = PrivacyAccountant(epsilon=EPSILON, delta=sim.DELTA)
release = sim.release(truth["private"], epsilon=EPSILON, accountant=accountant)
with tempfile.TemporaryDirectory() as folder:
    release = Release.load(release.save(Path(folder) / "release.json"))
record = release.record
print(
    f"release: (X'y, y'y) of n = {record.n} records, {record.mechanism}, epsilon {record.epsilon:g}, "
    f"delta {record.delta:g}, L2 sensitivity {record.sensitivity:.2f}, noise sigma {record.scale:.1f}, "
    f"grid 2^{record.details['grid_exponent']}"
)
print(f"exact statistics {np.round(sim.statistics(truth['private']), 1)}, released {np.round(release.values, 1)}")

# 2. The analyst: the same program, noise-aware and naive, on the published release.
program = StanProgram(HERE / "ss_regression.stan")
fits = {
    flag: program.fit(release, data=sim.public_data(noise_aware=flag), chains=4, warmup=500, draws=500, seed=1)
    for flag in (1, 0)
}
print("\nparameter  truth   naive (90% interval)     noise-aware (90% interval)")
true_values = {"beta[1]": truth["parameters"]["beta"][0], "beta[2]": truth["parameters"]["beta"][1]}
true_values["sigma"] = truth["parameters"]["sigma"]
for name, value in true_values.items():
    cells = []
    for flag in (0, 1):
        base, _, index = name.partition("[")
        draws = fits[flag].draws(base)
        draws = draws[:, int(index[0]) - 1] if index else draws
        lo, mid, hi = np.quantile(draws, [0.05, 0.5, 0.95])
        cells.append(f"{mid:.3f} ({lo:.3f}, {hi:.3f})")
    print(f"{name:9}  {value:6.3f}  {cells[0]:23}  {cells[1]}")

# 3. Simulation-based calibration: 60 replicates drawn from the prior, released as real releases
#    are (secure path, seeded source), one fit each. Family-wise false rejection 1 %.
results = {}
for name, simulator in (("noise-aware", "ss_regression_sim.py"), ("naive", "ss_regression_naive_sim.py")):
    result = run_sbc(
        "program",
        options={"program": str(HERE / "ss_regression.stan"), "simulator": str(HERE / simulator), "epsilon": EPSILON},
        replicates=60,
        sampler=Sampler(chains=1, warmup=300, draws=400),
        seed=3,
    )
    results[name] = result
    print(
        f"\nSBC of the {name} program: {'PASS' if result.passed else 'FAIL'} "
        f"(60 replicates, L = {result.rank_draws}, alpha = {result.alpha:g})"
    )
    print(result.summary[["parameter", "ecdf_pvalue", "passed", "low_ess"]].to_string(index=False))

sys.exit(0 if results["noise-aware"].passed and not results["naive"].passed else 1)
