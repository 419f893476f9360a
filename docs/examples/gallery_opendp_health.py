"""Gallery: case counts and hospitalisations by region, released by a health agency with OpenDP.

The program and its simulator are in examples/opendp_health/. Run from the repository root:
    python docs/examples/gallery_opendp_health.py
It exits with 1 if the noise-aware program fails its SBC or the naive one passes.
"""

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np

from pystanprivacy import PrivacyAccountant
from pystanprivacy.checks.sbc import Sampler, run_sbc
from pystanprivacy.interop.opendp import import_polars_query, likelihood
from pystanprivacy.models.custom import StanProgram

HERE = Path("examples/opendp_health")
warnings.simplefilter("ignore", FutureWarning)  # OpenDP's dp.len(): "signed=False is the default"


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sim = load(HERE / "opendp_health_sim.py")

# 1. The health agency (data owner): its private cases (drawn from the model's prior here, the
#    truth kept for the table), released with OpenDP: case counts and hospitalisations by region.
truth = sim.draw(np.random.default_rng(2026))
query, measurement = sim.query()
released = measurement(sim.cases_frame(truth["counts"], truth["hosp"])).collect().sort("region")
print(dict(query.summarize().select("column", "aggregate", "distribution", "scale").rows_by_key("column")))

# 2. The analyst: the OpenDP release imported as pystanprivacy Releases; every record field is
#    read from the measurement (its summary, privacy map and domains), none restated.
imported = import_polars_query(query, released, measurement=measurement)
accountant = PrivacyAccountant(epsilon=sim.EPSILON)
imported.spend(accountant, label="cases and hospitalisations by region")
for column, rel in imported.releases.items():
    rec, lik = rel.record, likelihood(rel.record)
    print(
        f"{column}: {rec.details['noise']}; scale {rec.scale:g}, sensitivity {rec.sensitivity:g} "
        f"({rec.neighbouring}), epsilon {rec.epsilon:g}; clamped at 0: {bool(rec.details['clamped'])}; "
        f"likelihood {lik.stan} ({'exact' if lik.exact else 'approximate'})"
    )
print(f"accountant: spent {accountant.spent} of ({sim.EPSILON}, 0)")

counts, hosp = imported["len"], imported["hosp"]
data = {"s_obs": hosp.values.tolist(), "s_scale": hosp.record.scale}
program = StanProgram(HERE / "opendp_health.stan")
fits = {
    flag: program.fit(
        counts, data={**sim.public_data(noise_aware=flag), **data}, chains=4, warmup=500, draws=500, seed=1
    )
    for flag in (1, 0)
}
true_hosp = np.bincount(
    np.repeat(np.arange(len(sim.REGIONS)), truth["counts"]), weights=truth["hosp"], minlength=len(sim.REGIONS)
)
assert imported.keys["region"] == sim.REGIONS  # the released rows in the keys' order
print(
    "\nregion  cases: true (released)  hospitalised: true (released)  true rate  naive rate (90%)    noise-aware rate (90%)"
)
for g, region in enumerate(imported.keys["region"]):
    cells = []
    for flag in (0, 1):
        lo, mid, hi = np.quantile(fits[flag].draws("lambda")[:, g], [0.05, 0.5, 0.95])
        cells.append(f"{mid:5.2f} ({lo:5.2f}, {hi:5.2f})")
    print(
        f"{region:6}  {truth['counts'][g]:12d} ({counts.values[g]:3d})  {true_hosp[g]:19.0f} ({hosp.values[g]:3d})"
        f"  {truth['parameters']['lambda'][g]:9.2f}  {cells[0]:18}  {cells[1]}"
    )
for flag, name in ((0, "naive"), (1, "noise-aware")):
    lo, mid, hi = np.quantile(fits[flag].draws("theta"), [0.05, 0.5, 0.95])
    print(
        f"theta (hospitalised share), {name}: {mid:.3f} ({lo:.3f}, {hi:.3f}); true {truth['parameters']['theta']:.3f}"
    )

# 3. Simulation-based calibration, every replicate's release made by OpenDP (50 replicates, one
#    fit each, 1 chain). A calibrated program fails with probability at most 1 % (family-wise).
results = {}
for name, simulator in (("noise-aware", "opendp_health_sim.py"), ("naive", "opendp_health_naive_sim.py")):
    result = run_sbc(
        "program",
        options={
            "program": str(HERE / "opendp_health.stan"),
            "simulator": str(HERE / simulator),
            "epsilon": sim.EPSILON,
        },
        replicates=50,
        sampler=Sampler(chains=1, warmup=200, draws=200),
        seed=3,
    )
    results[name] = result
    print(
        f"\nSBC of the {name} program: {'PASS' if result.passed else 'FAIL'} "
        f"(50 replicates, L = {result.rank_draws}, alpha = {result.alpha:g})"
    )
    print(result.summary[["parameter", "ecdf_pvalue", "passed"]].to_string(index=False))

sys.exit(0 if results["noise-aware"].passed and not results["naive"].passed else 1)
