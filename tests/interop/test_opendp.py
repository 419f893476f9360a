"""OpenDP 0.16 releases imported as Releases (pystanprivacy.interop.opendp), with the real
``opendp`` package (the ``[opendp]`` extra, installed in CI; skipped only where it is absent).

* **Goodness of fit.** For every supported measurement, releases are drawn with OpenDP itself
  and tested against the law that the imported record selects (``likelihood(record).logp``:
  discrete masses on the integers or the lattice ``2^k Z``, the point mass at 0 of a clamped
  count, or the continuous density of OpenDP's default float granularity). OpenDP cannot be
  seeded, so each test is a chi-square test at level ``ALPHA = 1e-4`` (12 such tests: family
  false-rejection rate <= 1.2e-3 per run). Each test also computes its power against a law with
  a noise scale 10 % too large (20 % for the Polars columns; the noncentral chi-square, ``ncx2``) and asserts it is at least 0.99, so a
  wrong scale, a wrong lattice or an unmodelled clamp is caught; a clamped count is also
  checked to reject the unclamped law (its power is 1 - 1e-30 or more).
* **Records.** What each record states is compared with OpenDP's own numbers: the summary's
  scales, the privacy map of the whole query (ε or ρ), the input metric, the output dtypes.
* **Accounting.** Imported records compose in PrivacyAccountant: basic composition gives
  OpenDP's ε; under ``composition="zcdp"`` the composed ε is OpenDP's own zCDP -> (ε, δ)
  conversion (``make_zCDP_to_approxDP``) of the composed measurement.
* **Both ways.** This library's records exported to OpenDP (``to_opendp_measurement``) and
  imported back keep mechanism, scale, sensitivity and lattice; an imported record's export
  rebuilds a measurement with OpenDP's privacy map of the original.
* **Refusals.** Thresholded keys, means, non-additive mechanisms, explicit per-column scales,
  float32 and a missing/extra δ are refused with errors naming what was refused.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

dp = pytest.importorskip("opendp.prelude")
pl = pytest.importorskip("polars")

from pystanprivacy import PrivacyAccountant
from pystanprivacy import stanfunctions as sf
from pystanprivacy.interop import opendp as io
from pystanprivacy.privacy.accounting import curve_from_record
from pystanprivacy.privacy.mechanisms import Gaussian, Laplace

dp.enable_features("contrib")

#: level of each goodness-of-fit test (its false-rejection rate)
ALPHA = 1e-4
#: the least power each test must have against a noise scale WRONG_SCALE too large (10 %;
#: 20 % for the Polars columns, of fewer draws: 4000, where a 10 % error of a clamped count's
#: scale moves its point mass at 0 by 0.007 only)
MIN_POWER = 0.99
WRONG_SCALE = 0.1
POLARS_WRONG = 0.2
#: regions of the Polars data (one row each) and releases drawn: REGIONS * RELEASES draws
REGIONS, RELEASES = 50, 80
X_INT, X_FLOAT = 3, 2.5


# ----------------------------------------------------------------------------- helpers
def _frame(n=REGIONS):
    return pl.LazyFrame(
        {
            "region": [f"r{i:02d}" for i in range(n)],
            "x": [X_INT] * n,
            "f": [X_FLOAT] * n,
        }
    )


def _query(loss, *, unit=None, aggs=None, regions=REGIONS, group=True):
    data = _frame(regions)
    ctx = dp.Context.compositor(
        data=data,
        privacy_unit=unit or dp.unit_of(contributions=1),
        privacy_loss=loss,
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=["region"], invariant="keys", max_length=1000, max_groups=regions)],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # dp.len(): "signed=False is the default"
        aggs = aggs or [dp.len(), pl.col("x").dp.sum((0, 5)), pl.col("f").dp.sum((0.0, 5.0))]
        q = ctx.query().group_by("region").agg(*aggs) if group else ctx.query().select(*aggs)
    return q, data


def _draws(meas, data, releases=RELEASES):
    """``releases`` releases of the query's measurement on ``data``, stacked per column."""
    frames = [meas(data).collect() for _ in range(releases)]
    return {c: np.concatenate([f[c].to_numpy() for f in frames]) for c in frames[0].columns if c != "region"}


def _discrete_bins(lik, x, lattice, lo_hi):
    """The single values ``j`` (y = lattice * j) of a discrete law on ``lattice * Z`` whose mass
    is at least 1e-3 (the bins besides the two tails)."""
    js = np.arange(lo_hi[0], lo_hi[1] + 1)
    return js[np.exp(lik.logp(js * lattice, x)) >= 1e-3]


def _discrete_probs(lik, x, lattice, js):
    """Probabilities of the bins: below ``js[0]``, each of ``js``, above ``js[-1]``."""
    p = np.exp(lik.logp(js * lattice, x))
    below = np.arange(js[0] - 100_000, js[0])
    left = float(np.exp(lik.logp(below * lattice, x)).sum())
    return np.concatenate([[left], p, [max(0.0, 1.0 - left - float(p.sum()))]])


def _observed_discrete(samples, lattice, js):
    steps = np.round(np.asarray(samples, dtype=float) / lattice).astype(np.int64)
    assert np.array_equal(steps * lattice, np.asarray(samples, dtype=float)), "a release off the lattice"
    mid = np.array([np.count_nonzero(steps == j) for j in js])
    return np.concatenate([[np.count_nonzero(steps < js[0])], mid, [np.count_nonzero(steps > js[-1])]])


def _chi2(observed, probs):
    """(p-value, df) of the chi-square test; bins with zero probability must be empty."""
    observed = np.asarray(observed, dtype=float)
    nz = probs > 0
    assert observed[~nz].sum() == 0, "a release where the selected law puts no mass"
    n = observed.sum()
    exp = n * probs[nz] / probs[nz].sum()
    stat = float(((observed[nz] - exp) ** 2 / exp).sum())
    df = int(nz.sum()) - 1
    return float(stats.chi2.sf(stat, df)), df


def _power(probs, alt, n, df):
    """Power of the level-ALPHA chi-square test against ``alt`` (noncentral chi-square)."""
    nz = probs > 0
    lam = n * float(((alt[nz] - probs[nz]) ** 2 / probs[nz]).sum())
    return float(stats.ncx2.sf(stats.chi2.isf(ALPHA, df), df, lam))


def _scaled(lik, factor):
    return io.NoiseLikelihood(**{**lik.__dict__, "scale": lik.scale * factor})


def check_discrete(samples, record, x, wrong=WRONG_SCALE):
    """Chi-square test of integer/lattice releases against the record's law, with its power
    against a scale ``wrong`` too large."""
    lik = io.likelihood(record)
    assert lik.discrete
    lattice = 1.0 if lik.grid is None else lik.grid
    span = int(40 * lik.scale / lattice) + 40
    mu = x if lik.grid is None else lattice * round(x / lattice)
    centre = round(mu / lattice)
    lo = 0 if lik.clamped_at_zero else centre - span
    js = _discrete_bins(lik, x, lattice, (lo, centre + span))
    probs = _discrete_probs(lik, x, lattice, js)
    obs = _observed_discrete(samples, lattice, js)
    pvalue, df = _chi2(obs, probs)
    assert pvalue > ALPHA, (record.details["noise"], pvalue)
    alt = _discrete_probs(_scaled(lik, 1 + wrong), x, lattice, js)
    assert _power(probs, alt, len(samples), df) >= MIN_POWER
    return lik, js, obs, probs


def check_continuous(samples, record, x, bins=20, wrong=WRONG_SCALE):
    """Chi-square test of float releases on ``bins`` bins (edges at x + scale * (-4, ..., 4),
    probabilities by integrating the selected density ``exp(logp)``), with its power against a
    scale ``wrong`` too large."""
    lik = io.likelihood(record)
    assert not lik.discrete
    dens = lambda y, L=lik: float(np.exp(L.logp(y, x)))
    edges = [x + lik.scale * q for q in np.linspace(-4, 4, bins - 1)]

    def probs_of(L):
        f = lambda y: float(np.exp(L.logp(y, x)))
        inner = [integrate.quad(f, a, b, epsabs=1e-13)[0] for a, b in itertools.pairwise(edges)]
        left = integrate.quad(f, -np.inf, edges[0], epsabs=1e-13)[0]
        right = integrate.quad(f, edges[-1], np.inf, epsabs=1e-13)[0]
        return np.array([left, *inner, right])

    probs = probs_of(lik)
    assert probs.sum() == pytest.approx(1.0, abs=1e-9)  # the selected density is normalised
    obs = np.histogram(samples, bins=[-np.inf, *edges, np.inf])[0]
    pvalue, df = _chi2(obs, probs)
    assert pvalue > ALPHA, (record.details["noise"], pvalue)
    alt = probs_of(_scaled(lik, 1 + wrong))
    assert _power(probs, alt, len(samples), df) >= MIN_POWER
    assert dens(x) > 0
    return lik


# ----------------------------------------------------------------------------- Polars queries
def _imported(loss, **kwargs):
    """(query, data, its measurement, the import of one release). The release is the
    measurement applied to the data, as ``query.release()`` does (its binary search for the
    noise scale, ``resolve()``, is slow: done once here and once by the import)."""
    q, data = _query(loss)
    meas = q.resolve()
    return q, data, meas, io.import_polars_query(q, meas(data).collect(), **kwargs)


@pytest.fixture(scope="module")
def laplace_query():
    return _imported(dp.loss_of(epsilon=1.0))


@pytest.fixture(scope="module")
def gaussian_query():
    return _imported(dp.loss_of(rho=0.5), delta=1e-6)


def test_polars_laplace_records_state_what_opendp_states(laplace_query):
    _, _, meas, imp = laplace_query
    summary = dp.summarize_polars_measurement(meas)
    assert list(imp.releases) == summary["column"].to_list() == ["len", "x", "f"]
    for rel, scale in zip(imp.releases.values(), summary["scale"].to_list(), strict=True):
        rec = rel.record
        assert rec.mechanism == "laplace" and rec.scale == scale and rec.sensitivity_norm == "l1"
        assert rec.neighbouring == "add-remove"  # SymmetricDistance, one row
        assert rec.details["input_metric"] == "SymmetricDistance()"
        assert rec.details["query"]["group_by"] == ("region",)
        assert rec.details["query"]["keys"]["region"] == imp.keys["region"]
        assert rel.values.shape == (REGIONS,)
    len_rec, x_rec, f_rec = imp.records
    # sensitivities: one row moves one count by 1 and one sum by max|bound| = 5 (the float sum
    # carries OpenDP's floating-point relaxation, a few 1e-9)
    assert len_rec.sensitivity == 1.0 and x_rec.sensitivity == 5.0
    assert f_rec.sensitivity == pytest.approx(5.0, rel=1e-6) and f_rec.sensitivity >= 5.0
    # the guarantees add up to OpenDP's map of the whole query
    assert imp.epsilon == pytest.approx(meas.map(1), rel=1e-12)
    assert sum(r.sensitivity / r.scale for r in imp.records) == pytest.approx(meas.map(1), rel=1e-12)
    # support, lattice and clamping
    assert len_rec.details["clamped"]["lower"] == 0 and x_rec.details["clamped"] is False
    assert len_rec.details["support"] == {**len_rec.details["support"], "type": "integer", "grid": 1.0}
    assert f_rec.details["support"]["type"] == "float" and f_rec.details["support"]["grid_exponent"] == -1074
    assert "grid" not in f_rec.details  # no lattice a program can use
    assert [io.likelihood(r).stan for r in imp.records] == [
        "dp_discrete_laplace_censored_lpmf",
        "dp_discrete_laplace_lpmf",
        "double_exponential_lpdf",
    ]
    assert [io.likelihood(r).exact for r in imp.records] == [True, True, False]


def test_polars_laplace_releases_follow_the_selected_laws(laplace_query):
    _, data, meas, imp = laplace_query
    draws = _draws(meas, data)
    len_rec, x_rec, f_rec = imp.records
    lik, js, obs, _ = check_discrete(draws["len"], len_rec, 1, wrong=POLARS_WRONG)
    # the clamp: the unclamped law is rejected (its mass at 0 is tanh(1/(2t)) e^(-1/t), not P(K >= 1))
    assert js[0] == 0 and obs[0] == 0
    unclamped = io.NoiseLikelihood(**{**lik.__dict__, "clamped_at_zero": False})
    p0 = float(np.exp(unclamped.logp(0, 1)))
    assert stats.binom.sf(obs[1] - 1, obs.sum(), p0) < 1e-30
    check_discrete(draws["x"], x_rec, X_INT, wrong=POLARS_WRONG)
    check_continuous(draws["f"], f_rec, X_FLOAT, wrong=POLARS_WRONG)


def test_polars_gaussian_records_and_releases(gaussian_query):
    _, data, meas, imp = gaussian_query
    len_rec, x_rec, f_rec = imp.records
    assert {r.mechanism for r in imp.records} == {"gaussian"}
    assert imp.rho == pytest.approx(meas.map(1), rel=1e-12)
    assert sum(r.details["zcdp_rho"] for r in imp.records) == pytest.approx(meas.map(1), rel=1e-12)
    assert sum(r.delta for r in imp.records) == pytest.approx(1e-6, rel=1e-12)
    assert [io.likelihood(r).stan for r in imp.records] == [
        "dp_discrete_gaussian_censored_lpmf",
        "dp_discrete_gaussian_lpmf",
        "normal_lpdf",
    ]
    draws = _draws(meas, data)
    lik, _, obs, _ = check_discrete(draws["len"], len_rec, 1, wrong=POLARS_WRONG)
    unclamped = io.NoiseLikelihood(**{**lik.__dict__, "clamped_at_zero": False})
    assert stats.binom.sf(obs[1] - 1, obs.sum(), float(np.exp(unclamped.logp(0, 1)))) < 1e-30
    check_discrete(draws["x"], x_rec, X_INT, wrong=POLARS_WRONG)
    check_continuous(draws["f"], f_rec, X_FLOAT, wrong=POLARS_WRONG)


def test_replace_one_unit_reads_as_replace_one():
    q, data = _query(dp.loss_of(epsilon=1.0), unit=dp.unit_of(changes=1), regions=3)
    meas = q.resolve()
    imp = io.import_polars_query(q, meas(data).collect())
    assert {r.neighbouring for r in imp.records} == {"replace-one"}
    # a change is a removal and an addition: twice the add/remove sensitivities; the columns'
    # epsilons add up to OpenDP's map (within its floating-point relaxations, never below it)
    assert [r.sensitivity for r in imp.records][:2] == [2.0, 10.0]
    assert imp.epsilon == pytest.approx(meas.map(1), rel=1e-9) and imp.epsilon >= meas.map(1)
    # a change moves two groups: no one-coordinate discrete curve is claimed
    assert all("changed_coordinates" not in r.details for r in imp.records)


def test_selected_functions_are_in_the_catalogue_for_the_records_mechanism(laplace_query, gaussian_query):
    for imp in (laplace_query[3], gaussian_query[3]):
        for rec in imp.records:
            name = io.likelihood(rec).stan
            if name.startswith("dp_"):
                assert rec.mechanism in sf.CATALOGUE[name].mechanisms, name


# ----------------------------------------------------------------------------- plain measurements
N_VEC = 20_000


def _vector_measurement(mechanism, T, k=None, scale=1.7, size=N_VEC):
    atom = dp.atom_domain(T=T) if T is int else dp.atom_domain(T=T, nan=False)
    domain = dp.vector_domain(atom, size=size)
    if mechanism == "laplace":
        return dp.m.make_laplace(domain, dp.l1_distance(T=T), scale=scale, k=k)
    return dp.m.make_gaussian(domain, dp.l2_distance(T=T), scale=scale, k=k)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize(
    "T, k, x, stan",
    [
        (int, None, 7, "dp_discrete_{m}_lpmf"),
        (float, None, 0.3, "{builtin}"),
        (float, -2, 0.3, "dp_discrete_{m}_grid_lpdf"),
    ],
)
def test_plain_measurements_follow_the_selected_laws(mechanism, T, k, x, stan):
    meas = _vector_measurement(mechanism, T, k)
    d_in = 1 if T is int else 1.0
    extra = {} if mechanism == "laplace" else {"delta": 1e-6}
    release = io.import_measurement(meas, meas([x] * N_VEC), d_in=d_in, neighbouring="add-remove", **extra)
    rec = release.record
    assert rec.scale == 1.7  # read from the privacy map and confirmed by rebuilding
    builtin = "double_exponential_lpdf" if mechanism == "laplace" else "normal_lpdf"
    assert io.likelihood(rec).stan == stan.format(m=mechanism, builtin=builtin)
    guarantee = meas.map(d_in)
    if mechanism == "laplace":
        assert rec.epsilon == guarantee
    else:
        assert rec.details["zcdp_rho"] == guarantee
    if k is not None:
        # the map charges the input's rounding to 2^k: n 2^k (L1) or sqrt(n) 2^k (L2)
        assert rec.details["support"]["grid_exponent"] == k and rec.details["grid"] == 2.0**k
        relax = N_VEC * 2.0**k if mechanism == "laplace" else math.sqrt(N_VEC) * 2.0**k
        assert rec.sensitivity == pytest.approx(1.0 + relax, rel=1e-12)
    else:
        assert rec.sensitivity == 1.0
    if io.likelihood(rec).discrete:
        check_discrete(release.values, rec, x)
    else:
        check_continuous(release.values, rec, x)


def test_scalar_integer_measurement_gets_the_one_coordinate_curve():
    meas = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=4.0)
    rel = io.import_measurement(meas, meas(10), d_in=2, neighbouring="replace-one")
    assert rel.values.shape == () and rel.record.epsilon == 0.5 and rel.record.sensitivity == 2.0
    curve, _ = curve_from_record(rel.record)
    assert curve.kind == "discrete_laplace" and curve.pure_epsilon() == pytest.approx(meas.map(2))


# ----------------------------------------------------------------------------- accounting
def test_laplace_query_composes_to_opendps_epsilon(laplace_query):
    _, _, meas, imp = laplace_query
    basic = PrivacyAccountant(epsilon=10.0)
    imp.spend(basic, label="by region")
    assert basic.spent[0] == pytest.approx(meas.map(1), rel=1e-12)
    for rule in ("rdp", "pld"):
        acc = PrivacyAccountant(epsilon=10.0, delta=1e-6, composition=rule)
        imp.spend(acc)
        imp.spend(acc)
        assert acc.spent[0] <= 2 * meas.map(1) * (1 + 1e-9)


def test_zcdp_query_composes_as_rho_like_opendps_conversion(gaussian_query):
    """Two imported zCDP queries under composition='zcdp': ρ adds up, and the composed ε at the
    budget's δ is OpenDP's own conversion of OpenDP's composition of the two measurements."""
    _, _, meas, imp = gaussian_query
    for rec in imp.records:
        curve, _ = curve_from_record(rec)
        assert curve.rho() == pytest.approx(rec.details["zcdp_rho"], rel=1e-12)
    acc = PrivacyAccountant(epsilon=50.0, delta=1e-5, composition="zcdp")
    imp.spend(acc, label="first")
    imp.spend(acc, label="second")
    both = dp.c.make_composition([meas, meas])
    assert both.map(1) == pytest.approx(2 * imp.rho, rel=1e-12)
    want = dp.c.make_zCDP_to_approxDP(both).map(1).epsilon(1e-5)
    assert acc.spent == (pytest.approx(want, rel=1e-6), 1e-5)
    # basic composition of the same records is much looser
    basic = PrivacyAccountant(epsilon=50.0, delta=1e-5)
    imp.spend(basic)
    imp.spend(basic)
    assert basic.spent[0] > 1.5 * want


# ----------------------------------------------------------------------------- both ways
def test_secure_laplace_release_exports_and_imports_back():
    ours = Laplace(epsilon=0.5, sensitivity=1.0).release(np.array([3, 4, 5]), neighbouring="add-remove")
    spec = io.to_opendp(ours.record)
    assert spec["constructor"] == "make_laplace" and spec["output_measure"] == "max_divergence()"
    assert spec["arguments"] == {"scale": ours.record.scale, "k": None} and spec["exact"] is True
    meas = io.to_opendp_measurement(ours.record, size=3)
    assert meas.map(spec["d_in"]) == pytest.approx(ours.record.epsilon, rel=1e-12)
    back = io.import_measurement(meas, meas([3, 4, 5]), d_in=spec["d_in"], neighbouring=ours.record.neighbouring)
    for name in ("mechanism", "sensitivity_norm", "neighbouring"):
        assert getattr(back.record, name) == getattr(ours.record, name), name
    for name in ("epsilon", "scale", "sensitivity"):
        assert getattr(back.record, name) == pytest.approx(getattr(ours.record, name), rel=1e-12), name
    assert back.record.details["grid"] == ours.record.details["grid"] == 1.0


def test_secure_float_gaussian_release_exports_with_its_grid():
    ours = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0).release(np.array([0.3, 1.7]))
    k = ours.record.details["grid_exponent"]
    spec = io.to_opendp(ours.record)
    assert spec["constructor"] == "make_gaussian" and spec["arguments"] == {"scale": ours.record.scale, "k": k}
    meas = io.to_opendp_measurement(ours.record, size=2)
    back = io.import_measurement(meas, meas([0.3, 1.7]), d_in=1.0, neighbouring="replace-one", delta=1e-5)
    assert back.record.scale == ours.record.scale
    assert back.record.details["support"]["grid_exponent"] == k and back.record.details["grid"] == 2.0**k
    assert io.likelihood(back.record).stan == "dp_discrete_gaussian_grid_lpdf"


def test_imported_record_exports_to_a_measurement_with_opendps_map():
    meas = _vector_measurement("laplace", float, k=-3, scale=2.5, size=5)
    rec = io.import_measurement(meas, meas([0.0] * 5), d_in=1.0, neighbouring="add-remove").record
    rebuilt = io.to_opendp_measurement(rec, size=5)
    for d in (0.5, 1.0, 4.0):
        assert rebuilt.map(d) == meas.map(d)
    assert io.to_opendp(rec)["d_out"] == {"epsilon": meas.map(1.0)}


def test_export_refuses_what_opendp_has_no_constructor_for():
    from pystanprivacy.privacy.mechanisms import OptimalUnaryEncoding

    rec = OptimalUnaryEncoding(epsilon=1.0, d=3, seed=0).release(np.array([[0, 1, 0]])).record
    with pytest.raises(io.OpenDPMappingError, match="'oue' has no OpenDP constructor"):
        io.to_opendp(rec)


# ----------------------------------------------------------------------------- refusals
def test_thresholded_keys_are_refused():
    data = _frame(3)
    ctx = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=1000)],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        q = ctx.query().group_by("region").agg(dp.len())
    with pytest.raises(io.OpenDPMappingError, match=r"output measure 'Approximate\(MaxDivergence\)' is refused"):
        io.import_polars_query(q, pl.DataFrame({"region": ["r00"], "len": [3]}))


def test_a_mean_is_refused():
    q, _ = _query(dp.loss_of(epsilon=1.0), aggs=[pl.col("f").dp.mean((0.0, 5.0))], regions=3)
    with pytest.raises(io.OpenDPMappingError, match="a mean"):
        io.import_polars_query(q, pl.DataFrame({"region": ["r00"]}))


def test_an_explicit_column_scale_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # dp.len(): "signed=False is the default"
        aggs = [dp.len(), pl.col("x").dp.sum((0, 5), scale=3.0)]
    q, _ = _query(dp.loss_of(epsilon=1.0), aggs=aggs, regions=3)
    with pytest.raises(io.OpenDPMappingError, match="the per-column guarantee cannot be stated"):
        io.import_polars_query(q, pl.DataFrame({"region": ["r00"]}))


def test_non_additive_measurements_are_refused():
    rr = dp.m.make_randomized_response_bool(prob=0.75)
    with pytest.raises(io.OpenDPMappingError, match="input metric 'DiscreteDistance' and output measure"):
        io.import_measurement(rr, rr(True), d_in=1, neighbouring="replace-one")
    gumbel = dp.m.make_noisy_max(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float), dp.max_divergence(), scale=1.0
    )
    with pytest.raises(io.OpenDPMappingError, match="is refused: only make_laplace"):
        io.import_measurement(gumbel, gumbel([1.0, 2.0]), d_in=1.0, neighbouring="replace-one")


def test_float32_and_delta_misuse_are_refused():
    m32 = dp.m.make_laplace(dp.atom_domain(T="f32", nan=False), dp.absolute_distance(T="f32"), scale=1.0)
    with pytest.raises(io.OpenDPMappingError, match="element type 'f32' is refused"):
        io.import_measurement(m32, 1.0, d_in=1.0, neighbouring="replace-one")
    lap = _vector_measurement("laplace", int, size=2)
    with pytest.raises(ValueError, match="delta=1e-06 given for a pure"):
        io.import_measurement(lap, lap([1, 2]), d_in=1, neighbouring="replace-one", delta=1e-6)
    gau = _vector_measurement("gaussian", int, size=2)
    with pytest.raises(ValueError, match="delta is required for a zCDP measurement"):
        io.import_measurement(gau, gau([1, 2]), d_in=1, neighbouring="replace-one")
    with pytest.raises(ValueError, match="neighbouring"):
        io.import_measurement(lap, lap([1, 2]), d_in=1, neighbouring="row")


def test_released_output_must_match_the_measurement(laplace_query):
    q = laplace_query[0]
    lap = _vector_measurement("laplace", int, size=2)
    with pytest.raises(ValueError, match="released holds 3 values; the domain's size is 2"):
        io.import_measurement(lap, [1, 2, 3], d_in=1, neighbouring="replace-one")
    with pytest.raises(ValueError, match=r"released has no column\(s\) \['x'\]"):
        io.import_polars_query(q, pl.DataFrame({"region": ["r00"], "len": [1], "f": [0.5]}))


def test_simulated_releases_say_so(laplace_query):
    q, data, meas, _ = laplace_query
    imp = io.import_polars_query(q, meas(data).collect(), simulated=True)
    for rec in imp.records:
        assert rec.details["secure"] is False and rec.details["simulated"] is True
        assert curve_from_record(rec)[0] is None  # not a real release: no curve


def test_a_measurement_of_another_query_is_refused(laplace_query, gaussian_query):
    q = laplace_query[0]
    _, data, meas, _ = gaussian_query
    with pytest.raises(io.OpenDPMappingError, match="measurement is not this query's"):
        io.import_polars_query(q, meas(data).collect(), measurement=meas)
    other, _ = _query(dp.loss_of(epsilon=1.0), aggs=[dp.len()], regions=REGIONS)
    with pytest.raises(io.OpenDPMappingError, match="measurement is not this query's"):
        io.import_polars_query(other, meas(data).collect(), measurement=laplace_query[2])


def test_imported_releases_are_published_and_loaded_back(tmp_path):
    """Release.save / Release.load of imported releases: the Laplace record against the Laplace
    calibration, the Gaussian one against OpenDP's zCDP map (a forged smaller noise refused)."""
    from pystanprivacy.privacy import PrivacyRecord, Release, ReleaseFileError

    lap = _vector_measurement("laplace", int, size=3)
    gau = _vector_measurement("gaussian", float, size=3)
    for rel in (
        io.import_measurement(lap, lap([1, 2, 3]), d_in=1, neighbouring="add-remove"),
        io.import_measurement(gau, gau([1.0, 2.0, 3.0]), d_in=1.0, neighbouring="add-remove", delta=1e-6),
    ):
        back = Release.load(rel.save(tmp_path / f"{rel.record.mechanism}.json"))
        assert back == rel
    forged = Release(
        values=rel.values, record=PrivacyRecord.from_dict({**rel.record.to_dict(), "scale": rel.record.scale / 2})
    )
    with pytest.raises(ReleaseFileError, match="zcdp_rho"):
        Release.load(forged.save(tmp_path / "forged.json"))
