#!/usr/bin/env python
"""Cost of the mode-mass estimate (:func:`pystanprivacy.sampling.modes.mode_masses` with the
HMM's numpy log density) on the dimensions of the real Afghanistan diary, K = 3 and K = 10,
without the fit: 8 chains x 500 draws in one mode (draws near an EM solution of the released
counts; their values do not change the cost), so the bridge sees 8 x 250 posterior draws and
2,000 proposal draws. Prints one JSON line per K: the parameters, the seconds per log-density
point, and the wall and CPU seconds of the whole estimate.

    nice -n 10 python benchmarks/mode_mass_cost.py
"""

from __future__ import annotations

import json
import time
import warnings

import numpy as np

from pystanprivacy.experiments.foulds2016.warlogs import load_war_logs
from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMM
from pystanprivacy.models.foulds2016_hmm.init import em_initial_values
from pystanprivacy.models.foulds2016_hmm.modes import HMMLogDensity
from pystanprivacy.sampling.modes import mode_masses


def main() -> None:
    warnings.simplefilter("ignore")
    counts = load_war_logs("data/afg_war_diary.csv.gz")
    release = NaiveBayesHMM.release(counts, epsilon=1.0, seed=0)
    for k in (3, 10):
        model = NaiveBayesHMM(k)
        values, layout = model._check_release(release)
        inits, ref = em_initial_values(values, layout, k, 1, np.random.default_rng(0), restarts=1)
        density = HMMLogDensity(model.data(values, layout, None, ref))
        u0 = density.unconstrained(np.asarray(inits[0]["A"])[None], np.asarray(inits[0]["eta"])[None])[0]
        rng = np.random.default_rng(1)
        start = time.perf_counter()
        density(u0 + 0.001 * rng.normal(size=(512, density.dim)))
        per_point = (time.perf_counter() - start) / 512
        draws = u0 + 0.001 * rng.normal(size=(8, 500, density.dim))
        wall, cpu = time.perf_counter(), time.process_time()
        mode_masses([draws], density, seed=2)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            json.dumps(
                {
                    "n_states": k,
                    "parameters": density.dim,
                    "seconds_per_point": round(per_point, 5),
                    "wall_seconds": round(wall, 1),
                    "cpu_seconds": round(cpu, 1),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
