"""Issue 66 part 2: SBC of a user's program simulates releases the way real ones are made.

``poisson_grid.stan`` is right for real (secure) Gaussian releases of counts only: it models the
discrete Gaussian noise on the grid ``dp_grid`` exactly and rejects a value off the grid. Its
SBC (default: releases made through the mechanism's secure path from a seeded source) passes;
its naive form (``noise_aware = 0``) fails, by its ranks, not by an error; a release off the
grid (what a seeded release is) makes Stan reject it, and the error shows Stan's numbers only
where the data are declared public or simulated. One program is compiled (a module fixture).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.checks.sbc import Sampler, run_sbc
from pystanprivacy.models.custom import StanProgram
from pystanprivacy.privacy.mechanisms import AnalyticGaussian
from pystanprivacy.privacy.records import Release
from pystanprivacy.sampling.stan import StanRunError

warnings.filterwarnings("ignore", message="a seed was given")
HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "poisson_grid.stan"
SAMPLER = Sampler(chains=1, warmup=200, draws=200)


@pytest.fixture(scope="module")
def grid_program():
    program = StanProgram(PROGRAM)
    program.stan_model  # noqa: B018 - compile (or load) once for the module
    return program


def _sbc(simulator: str):
    options = {"program": str(PROGRAM), "simulator": str(HERE / simulator), "epsilon": 0.5}
    return run_sbc("program", options=options, replicates=50, sampler=SAMPLER, seed=7)


def test_a_program_right_for_real_releases_passes_sbc_and_its_naive_form_fails(grid_program):
    aware = _sbc("poisson_grid_sim.py")
    # every replicate's release was made as a real one: the secure path's grid (the program
    # rejects anything off it, so 50 fits without an error say so too)
    assert "secure path" in aware.settings["releases"]
    # a calibrated program fails with probability <= alpha = 0.01 (Bonferroni over the 3 rates)
    assert aware.passed, aware.summary
    naive = _sbc("poisson_grid_naive_sim.py")
    # the naive fit takes the released value for the count (sd sqrt(lambda) ~ 3, against noise
    # sigma ~ 8 at epsilon 0.5): its ranks pile up at both ends. This fixed seed's outcome; the
    # ranks, not a failed fit, make it fail: every replicate has its 3 ranks
    assert not naive.passed and len(naive.ranks) == 50 * 3
    assert (naive.summary["ecdf_pvalue"] < 0.01 / 3).all(), naive.summary


def test_off_grid_values_are_rejected_by_stan_with_numbers_only_for_public_data(grid_program):
    release = AnalyticGaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0).release(np.array([4, 9, 13]))
    grid = release.record.details["grid"]
    # what a seeded release looks like to the program: values off the grid (a third of a step)
    off = Release(values=release.values + grid / 3, record=release.record)
    data = {"max_count": 80, "noise_aware": 1}
    with pytest.raises(StanRunError) as public:
        grid_program.fit(off, data=data, chains=1, warmup=20, draws=20, seed=1, public_data=True)
    message = str(public.value)
    assert "y must be on the grid" in message and "<num>" not in message
    assert f"{grid:g}" in message  # the grid, as Stan prints it (6 significant digits)
    assert f"{off.values[0]:.6g}"[:5] in message  # and the offending value
    with pytest.raises(StanRunError) as private:
        grid_program.fit(off, data=data, chains=1, warmup=20, draws=20, seed=1)
    masked = str(private.value)
    assert "y must be on the grid <num>; got <num>" in masked
    assert f"{off.values[0]:.6g}"[:5] not in masked
    with pytest.raises(TypeError, match="public_data must be True or False"):
        grid_program.fit(release, data=data, chains=1, warmup=20, draws=20, seed=1, public_data="yes")


def test_fit_cli_public_data_shows_stans_numbers_and_the_default_masks_them(grid_program, tmp_path, capsys):
    from pystanprivacy import cli

    release = AnalyticGaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0).release(np.array([4, 9, 13]))
    path = release.save(tmp_path / "release.json")
    data = tmp_path / "data.json"
    data.write_text('{"max_count": -7, "noise_aware": 1}')  # below the program's lower bound 0: Stan refuses
    argv = ["fit", str(PROGRAM), str(path), "--data", str(data), "--chains", "1", "--warmup", "20", "--draws", "20"]
    assert cli.main([*argv, "--out", str(tmp_path / "a"), "--public-data"]) == 1
    shown = capsys.readouterr().err
    assert "max_count" in shown and "-7" in shown and "<num>" not in shown
    assert cli.main([*argv, "--out", str(tmp_path / "b")]) == 1
    masked = capsys.readouterr().err
    assert "max_count" in masked and "-7" not in masked and "<num>" in masked
