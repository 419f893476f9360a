"""benchmarks/bench_compile_flags.py without compiling a model: the --O1 wrapper really passes
--O1 to httpstan's stanc (its C++ holds struct-of-arrays vars where the default's has none), the
variant backends keep their builds apart from the default's, and the data are Wine-sized."""

from __future__ import annotations

import numpy as np
import pytest

SOA = "stan::math::var_value<Eigen::Matrix"  # a struct-of-arrays var, stanc --O1 only
PROGRAM = "parameters { vector[3] x; } model { target += -0.5 * dot_self(exp(x)); }"


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("bench_compile_flags")


def test_o1_wrapper_passes_o1_to_stanc(bench):
    import httpstan.compile

    default, _ = httpstan.compile.compile(PROGRAM, "bench_flags_default")
    o1, _ = bench._stanc_o1(PROGRAM, "bench_flags_o1")
    assert SOA not in default and SOA in o1


def test_variants_have_their_own_cache_tags_and_unknown_ones_are_refused(bench):
    from pystanprivacy.sampling.backends.pystan_backend import PystanBackend

    default = PystanBackend().version_tag()
    assert bench.variant_backend("O1").version_tag() == f"{default}-O1"
    assert bench.variant_backend("native").version_tag() == f"{default}-native"
    assert bench.variant_backend("O2").version_tag() == f"{default}-O2"
    assert bench.variant_backend("O3").version_tag() == f"{default}-O3"
    with pytest.raises(ValueError, match="variant must be 'O1', 'native', 'O2' or 'O3', got 'O0'"):
        bench.variant_backend("O0")


def test_network_data_is_the_non_private_gibbs_posterior_on_wine_sized_records(bench):
    data = bench.network_data(50)
    assert data["X"].shape == (50, 11) and data["y"].shape == (50,)
    assert data["betad"] == 0 and data["w"] == 1.0 and data["H"] == 10
    assert np.all(np.isfinite(data["y"]))


@pytest.mark.parametrize("variant", ["O2", "O3"])
def test_optimisation_variants_compile_at_their_level_and_restore_the_backends(bench, monkeypatch, variant):
    """The O2/O3 variants append their level last while they compile (no compile here: the
    backend's compile is replaced by one that records the flags) and put the backend's back."""
    from pystanprivacy.sampling.backends import pystan_backend

    seen = []
    monkeypatch.setattr(
        pystan_backend.PystanBackend, "compile", lambda self, *a: seen.append(pystan_backend.MODEL_COMPILE_FLAGS)
    )
    before = pystan_backend.MODEL_COMPILE_FLAGS
    bench.variant_backend(variant).compile("program", "key", "cache")
    assert seen == [("-g0", f"-{variant}")]
    assert pystan_backend.MODEL_COMPILE_FLAGS == before == ("-g0", "-O2")
