"""Gallery: a survey proportion per region under randomised response, hierarchical.

The program and its simulator are in examples/rr_survey/. Run from the repository root:
    python docs/examples/gallery_rr_survey.py
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

HERE = Path("examples/rr_survey")
EPSILON = 1.0


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sim = load(HERE / "rr_survey_sim.py")

# 1. The data owner: every respondent's answer through randomised response (secure: no seed),
#    charged to the survey's budget, published as a file.
truth = sim.simulate(np.random.default_rng(2026))  # a population drawn from the prior
accountant = PrivacyAccountant(epsilon=EPSILON)
release = sim.release(truth["private"], epsilon=EPSILON, accountant=accountant)
with tempfile.TemporaryDirectory() as folder:
    release = Release.load(release.save(Path(folder) / "release.json"))
record = release.record
print(
    f"release: {release.values.size} reports, {record.mechanism}, epsilon {record.epsilon:g}, "
    f"p_keep {record.details['p_keep']:.4f}; spent {accountant.spent}"
)

# 2. The analyst: the same program, noise-aware and naive, on the published release.
program = StanProgram(HERE / "rr_survey.stan")
fits = {
    flag: program.fit(release, data=sim.public_data(noise_aware=flag), chains=4, warmup=500, draws=500, seed=1)
    for flag in (1, 0)
}
reported = np.bincount(sim.REGION - 1, weights=release.values) / sim.RESPONDENTS
print("\nregion  true p  reported share  naive p (90% interval)   noise-aware p (90% interval)")
for g in range(sim.RESPONDENTS.size):
    cells = []
    for flag in (0, 1):
        draws = fits[flag].draws("p")[:, g]
        lo, mid, hi = np.quantile(draws, [0.05, 0.5, 0.95])
        cells.append(f"{mid:.3f} ({lo:.3f}, {hi:.3f})")
    print(f"{g + 1:6}  {truth['parameters']['p'][g]:6.3f}  {reported[g]:14.3f}  {cells[0]:23}  {cells[1]}")

# 3. Simulation-based calibration: 60 replicates drawn from the prior, released as real releases
#    are (secure path, seeded source), one fit each. Family-wise false rejection 1 %.
results = {}
for name, simulator in (("noise-aware", "rr_survey_sim.py"), ("naive", "rr_survey_naive_sim.py")):
    result = run_sbc(
        "program",
        options={"program": str(HERE / "rr_survey.stan"), "simulator": str(HERE / simulator), "epsilon": EPSILON},
        replicates=60,
        sampler=Sampler(chains=1, warmup=200, draws=200),
        seed=3,
    )
    results[name] = result
    print(
        f"\nSBC of the {name} program: {'PASS' if result.passed else 'FAIL'} "
        f"(60 replicates, L = {result.rank_draws}, alpha = {result.alpha:g})"
    )
    print(result.summary[["parameter", "ecdf_pvalue", "passed"]].to_string(index=False))

sys.exit(0 if results["noise-aware"].passed and not results["naive"].passed else 1)
