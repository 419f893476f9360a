"""The gallery's examples (docs/gallery/, examples/rr_survey, examples/ss_regression): what their
programs assume about the release, checked against the mechanism and the declarations, without
Stan. Their fits and SBC runs are the documentation scripts ``docs/examples/gallery_*.py``, which
CI runs (``scripts/run_doc_examples.py``; each exits with 1 unless the noise-aware program passes
its SBC and the naive one fails)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.checks import sbc
from pystanprivacy.privacy.noise import simulated_randomness

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "name, simulator",
    [(n, s) for n in ("rr_survey", "ss_regression") for s in (f"{n}_sim.py", f"{n}_naive_sim.py")],
)
def test_each_simulator_fits_its_program_and_sets_the_switch(name, simulator):
    # one replicate through the program's data checks (declared dp_* names, record fields), as
    # `pystanprivacy sbc` does before anything runs; the naive simulator is the same but for the switch
    problem = sbc.make_problem(
        "program", program=str(EXAMPLES / name / f"{name}.stan"), simulator=str(EXAMPLES / name / simulator)
    )
    problem.preflight()
    _, _, _, data = problem._draw(np.random.default_rng(0))
    assert data["noise_aware"] == (0 if "naive" in simulator else 1)


def test_the_regression_sensitivity_bounds_every_neighbouring_change():
    # replace-one: one record's outcome moves anywhere in [-B, B] (the design is public). The
    # declared L2 sensitivity must bound the change of (X'y, y'y) over every record and every pair
    # of outcomes: checked by brute force on a grid of outcomes at the rows of largest norm
    sim = _load(EXAMPLES / "ss_regression" / "ss_regression_sim.py")
    values = np.linspace(-sim.B, sim.B, 241)
    worst = 0.0
    for i in (0, sim.N // 2, sim.N - 1):  # |t| = 1 (the largest row norms) and t = 0
        x = sim.X[i]
        for a, b in itertools.product(values, values):
            change = np.append(x * (a - b), a * a - b * b)
            worst = max(worst, float(np.linalg.norm(change)))
    assert worst <= sim.SENSITIVITY
    # and the bound is not loose by much (the two terms' maxima are not reached together)
    assert worst > 0.8 * sim.SENSITIVITY
    # the clipping is applied before the statistics: an outcome beyond B counts as B
    y = np.zeros(sim.N)
    y[0] = 100.0
    np.testing.assert_allclose(sim.statistics(y), [sim.B, -sim.B, sim.B**2])


def test_randomised_response_counts_are_the_programs_binomial():
    # the program's likelihood: the number of "yes" reports among n respondents whose true
    # proportion is p is Binomial(n, p_keep p + (1 - p_keep)(1 - p)): the answers are drawn
    # Bernoulli(p) and summed out (with the answers held fixed it would be a sum of two
    # binomials, narrower). Drawn here from the real secure path (exact Bernoulli flips, seeded
    # source): 3000 regions of 40 respondents, p = 0.25, against that binomial's pmf. Pearson
    # chi-square on the counts 8..22 and the two tails: false rejection 1e-3
    sim = _load(EXAMPLES / "rr_survey" / "rr_survey_sim.py")
    answers = (np.random.default_rng(20).random((3000, 40)) < 0.25).astype(np.int64)
    with simulated_randomness(21):
        release = sim.release(answers.reshape(-1), epsilon=1.0)
    keep = release.record.details["p_keep"]
    counts = release.values.reshape(3000, 40).sum(axis=1)
    law = stats.binom(40, keep * 0.25 + (1 - keep) * 0.75)
    cells = np.arange(8, 23)
    observed = np.array([np.sum(counts < 8), *[np.sum(counts == c) for c in cells], np.sum(counts > 22)])
    expected = 3000 * np.array([law.cdf(7), *law.pmf(cells), law.sf(22)])
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # the naive model's Binomial(40, 0.25) is far off: the same test rejects it
    naive = stats.binom(40, 0.25)
    expected_naive = 3000 * np.array([naive.cdf(7), *naive.pmf(cells), naive.sf(22)])
    assert stats.chisquare(observed, expected_naive / expected_naive.sum() * 3000).pvalue < 1e-10
