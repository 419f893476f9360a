"""Private hidden Markov model with naive-Bayes emissions (Foulds et al. 2016, Sec. 4-5, E).

The war-logs case study of the paper: R regions, each a chain of T monthly timesteps with a
latent state z_{r,t} in 1..K; every log entry of a region/month has D categorical features,
independent given the state (naive Bayes). The data enter only through the count vectors
n_{r,t,d,:} (Eq. 50-51), so

* :class:`NaiveBayesHMM` releases those counts once with the Laplace mechanism (E.1) and
  fits the model to the noisy counts (post-processing: any number of MCMC iterations is
  free), or fits the exact counts as a named non-private baseline;
* :class:`NaiveBayesHMMOPS` releases one draw of (A, theta, z) from the tempered posterior
  of the model with truncated Dirichlets (one-posterior sampling, Sec. 2.2 and 4.1), after
  checking that the sampler converged.

``n_states=1`` is the naive-Bayes model of the paper's naive-Bayes panels.

References
----------
.. [1] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri (2016), "On the theory and
   practice of privacy-preserving Bayesian data analysis", UAI. Eq. 6-10 (OPS at
   temperature T), Sec. 4.2 (Laplace mechanism inside MCMC), Sec. 5 and supplement E
   (generative process, Eq. 47; exponential-family form, Eq. 50-51; E.1 privacy).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._validation import (
    SeedLike,
    check_array,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
    check_real,
)
from ...privacy.mechanisms import Laplace, project_nonnegative
from ...privacy.records import (
    PrivacyAccountant,
    PrivacyRecord,
    Release,
    noise_details,
    warn_reproducible_not_secure,
)
from ...sampling.modes import MIN_DRAWS_PER_COORDINATE
from ...sampling.posterior import ConvergenceError, Posterior, Thresholds
from .._ops import (
    OPS_GATE,
    charge_attempt,
    check_allow_unconverged,
    check_ops_call,
    convergence_gate,
    ops_randomness,
    ops_temperature_of,
    secure_index,
    secure_permutation,
)
from ..base import NONPRIVATE, Example, Model, OPSModel, OPSResult, with_record
from .counts import (
    COUNT_SENSITIVITY,
    CountLayout,
    CountsLike,
    _check_heldout,
    _feature_sizes,
    _stan_data,
    reference_values,
)
from .heldout import heldout_log_likelihood, neighbour_state_log_weights
from .init import (
    DEFAULT_MAX_TREEDEPTH,
    DISPERSED_KINDS,
    INIT_METHODS,
    _check_init,
    _initial,
    balanced_reference_values,
    dispersed_initial_values,
    dispersed_kinds,
    em_initial_values,
    em_solution,
    kmeans_initial_values,
)
from .labels import (
    HMMDraws,
    _permute,
    align_states,
    convergence_problems,
    label_invariant_draws,
    match_states,
    state_agreement,
)
from .modes import DEFAULT_MIN_LOG_GAP, hmm_mode_masses, mode_tolerance, select_chains
from .truncation import (
    _check_a0,
    _check_multiplier,
    ops_log_likelihood_sensitivity,
    ops_temperature,
    ops_truncation,
)

__all__ = [
    "COUNT_SENSITIVITY",
    "DEFAULT_MAX_TREEDEPTH",
    "DISPERSED_KINDS",
    "CountLayout",
    "CountsLike",
    "HMMDraws",
    "INIT_METHODS",
    "NaiveBayesHMM",
    "NaiveBayesHMMOPS",
    "OPSResult",
    "SELECT_RULES",
    "align_states",
    "balanced_reference_values",
    "convergence_problems",
    "dispersed_initial_values",
    "dispersed_kinds",
    "em_initial_values",
    "em_solution",
    "heldout_log_likelihood",
    "kmeans_initial_values",
    "label_invariant_draws",
    "match_states",
    "neighbour_state_log_weights",
    "ops_log_likelihood_sensitivity",
    "ops_temperature",
    "ops_truncation",
    "reference_values",
    "state_agreement",
]


#: the release rules of :meth:`NaiveBayesHMMOPS.sample` / :meth:`NaiveBayesHMMOPS.sample_one`
SELECT_RULES = ("top-mode", "all-chains")


def _check_select(select: Any, min_log_gap: Any) -> tuple[str, float]:
    """``select`` one of :data:`SELECT_RULES`, ``min_log_gap`` a finite number >= 0 (checked
    before a charge)."""
    if not isinstance(select, str) or select not in SELECT_RULES:
        raise ValueError(f"select must be one of {SELECT_RULES}, got {select!r}")
    gap = check_real(min_log_gap, "min_log_gap")
    if gap < 0:
        raise ValueError(f"min_log_gap must be a finite number >= 0, got {min_log_gap!r}")
    return select, gap


def _split_epsilon(epsilon: Any, epsilon_per_feature: Any, n_features: int) -> tuple[float, list[float]]:
    """The total ε and ε_d per feature from exactly one of ``epsilon`` (split equally) and
    ``epsilon_per_feature``."""
    if (epsilon is None) == (epsilon_per_feature is None):
        raise ValueError("give exactly one of epsilon (total, split equally) and epsilon_per_feature")
    if epsilon is not None:
        total = check_epsilon(epsilon)
        return total, [total / n_features] * n_features
    if isinstance(epsilon_per_feature, (str, bytes)) or not isinstance(epsilon_per_feature, Sequence):
        raise TypeError(
            f"epsilon_per_feature must be a sequence of {n_features} numbers, got {type(epsilon_per_feature).__name__}"
        )
    if len(epsilon_per_feature) != n_features:
        raise ValueError(
            f"epsilon_per_feature must have one entry per feature ({n_features}), got {len(epsilon_per_feature)}"
        )
    eps = [check_epsilon(e, f"epsilon_per_feature[{d}]") for d, e in enumerate(epsilon_per_feature)]
    return float(sum(eps)), eps


def _noisy_counts(
    exact: np.ndarray, layout: CountLayout, eps: Sequence[float], rng: np.random.Generator | None
) -> tuple[np.ndarray, list[float], dict[str, Any]]:
    """Laplace(2/ε_d) noise on every feature's count vectors of ``exact`` (R, T, J), charging
    nothing: the noisy counts, each feature's noise scale and the randomness details. Each
    feature's mechanism checks its noise plan (public: ε_d, the sensitivity, the shape) before
    it draws; a refused plan raises ``ValueError`` naming epsilon.

    Without ``rng`` the noise is exact discrete Laplace on the integer counts with
    cryptographic randomness; with one, every feature draws from that Generator (reproducible).

    References
    ----------
    .. [1] Foulds et al. (2016), Sec. 4.2 and supplement E.1; Dwork & Roth (2014), Theorem 3.6.
    """
    noisy = np.empty(exact.shape, dtype=float)
    scales: list[float] = []
    randomness: dict[str, Any] = {}
    for d, sl in enumerate(layout.slices):
        mech = Laplace(epsilon=eps[d], sensitivity=COUNT_SENSITIVITY, seed=rng)
        part = mech.release(np.rint(exact[:, :, sl]).astype(np.int64))  # the caller charges, once
        noisy[:, :, sl] = part.values
        randomness = noise_details(part.record)
        scales.append(part.record.scale)
    return noisy, scales, randomness


def _count_record(
    layout: CountLayout,
    total: float,
    eps: Sequence[float],
    scales: Sequence[float],
    *,
    n: int,
    aggregated: bool,
    how: Mapping[str, Any],
) -> PrivacyRecord:
    """The record of a count release (:meth:`NaiveBayesHMM.release`, :meth:`NaiveBayesHMM.published`):
    ``how`` says how the noise was made (seeded, randomness) or that it was made elsewhere."""
    per_feature = [
        {
            "feature": layout.features[d],
            "epsilon": eps[d],
            "scale": scales[d],
            "sensitivity": COUNT_SENSITIVITY,
            "size": layout.feature_sizes[d],
        }
        for d in range(len(eps))
    ]
    distinct = set(scales)
    return PrivacyRecord(
        mechanism="laplace",
        epsilon=total,
        delta=0.0,
        sensitivity=COUNT_SENSITIVITY,
        sensitivity_norm="l1",
        scale=distinct.pop() if len(distinct) == 1 else None,
        n=n,
        neighbouring="replace-one",
        details={
            "statistic": "count vectors n[r,t,d,:] of every region/timestep cell and feature (Eq. 50-51)",
            "per_feature": per_feature,
            "composition": (
                "per feature the whole count array has L1 sensitivity 2 (one entry leaves one "
                "cell, enters one: parallel composition over cells); features compose "
                "sequentially: epsilon = sum of epsilon_d"
            ),
            "projection": "nonnegative",
            "aggregated": bool(aggregated),
            "layout": layout.to_dict(),
            "structure_from_data": layout.structure_from_data,
            "structure_note": (
                "regions, months and feature values are treated as public; when they were chosen "
                "from the data (thresholds, empty months, vocabularies) that choice is not covered"
            ),
            **how,
            "reference": "Foulds et al. 2016, Sec. 4.2 and supplement E.1",
        },
    )


# --------------------------------------------------------------- Laplace / non-private
class _HMMPrior:
    """What the Laplace and the OPS model share: the number of states and the Dirichlet
    concentrations."""

    def __init__(self, n_states: int, alpha: float, beta: float, backend: str | None) -> None:
        self.n_states = check_int(n_states, "n_states", minimum=1)
        self.alpha = check_positive(alpha, "alpha")
        self.beta = check_positive(beta, "beta")
        self.backend = backend


class NaiveBayesHMM(_HMMPrior, Model):
    """HMM with naive-Bayes emissions fitted to Laplace-privatised counts (E.1), and the
    named non-private baseline.

    Parameters
    ----------
    n_states : int
        K latent states (1: the naive-Bayes model).
    alpha, beta : float, default 1.0
        Dirichlet concentrations of the transition rows (including the dummy initial
        state) and of the emission distributions.
    backend : str, optional
        Stan backend (see :func:`pystanprivacy.sampling.backends.select_backend`).

    Examples
    --------
    >>> from pystanprivacy.experiments.foulds2016.warlogs import synthetic_war_logs, preprocess_war_logs
    >>> data = preprocess_war_logs(synthetic_war_logs("iraq", seed=1).records)   # doctest: +SKIP
    >>> release = NaiveBayesHMM.release(data, epsilon=5.0)                        # doctest: +SKIP
    >>> post = NaiveBayesHMM(2).fit(release, chains=2)                            # doctest: +SKIP
    >>> align_states(post).modal_states()                                         # doctest: +SKIP
    """

    model_name = "foulds2016/nb_hmm"

    @classmethod
    def example(cls, n: int = 4320, *, seed: int = 0, n_states: int = 2) -> Example:
        """``n`` simulated log entries on a 6 x 72 grid of cells with 3 features
        (:func:`~pystanprivacy.models.foulds2016_hmm.example.simulate_counts`), released at
        ``epsilon = 5`` (:class:`~pystanprivacy.models.base.Example`)."""
        from .example import FEATURE_SIZES, simulate_counts

        counts, truth = simulate_counts(n, n_states=n_states, seed=seed)
        return Example(
            cls(n_states),
            {"counts": counts},
            {"epsilon": 5.0, "feature_sizes": list(FEATURE_SIZES)},
            "counts",
            truth=truth,
        )

    def __init__(self, n_states: int, *, alpha: float = 1.0, beta: float = 1.0, backend: str | None = None) -> None:
        super().__init__(n_states, alpha, beta, backend)

    @classmethod
    def release(
        cls,
        counts: Any,
        *,
        epsilon: float | None = None,
        epsilon_per_feature: Sequence[float] | None = None,
        feature_sizes: Sequence[int] | None = None,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
        aggregate: bool = False,
        cells: Any = None,
    ) -> Release:
        """Release every cell's count vectors once: ``proj_{>=0}(n_{r,t,d,:} + Laplace(2/ε_d))``.

        Parameters
        ----------
        counts : counts object or array (R, T, J)
            Exact counts: an object with the count attributes of
            :class:`~pystanprivacy.experiments.foulds2016.warlogs.WarLogCounts`
            (:class:`~pystanprivacy.models.foulds2016_hmm.counts.CountsLike`), or an array with
            ``feature_sizes`` giving the K_d.
        epsilon : float
            Total ε, split equally over the D features (the paper: ε = 5, 1 per feature).
        epsilon_per_feature : sequence of float
            ε_d per feature instead (the total is their sum). Give one of the two.
        accountant : PrivacyAccountant, optional
            Charged the total ε once, as the last step: after every public check (each
            feature's noise plan included: an ε_d too small for the exact noise raises
            ``ValueError`` and charges nothing) and after the noise is drawn; when it
            refuses (``BudgetExceededError``) the noisy counts are discarded, nothing is
            released.
        aggregate : bool, default False
            Release only the corpus-wide count vectors sum_{r,t} n_{r,t,d,:} (over the cells
            where ``cells`` is True, default all), as one cell: all that naive Bayes (one
            state) needs, with one draw of noise per value instead of one per cell and
            value (the same sensitivity 2). Fit it with ``NaiveBayesHMM(1)``.
        cells : array (R, T) of bool, optional
            With ``aggregate``: the cells to sum (e.g. the training cells of a split; the
            choice must not depend on the data).

        Notes
        -----
        Per feature, the count array over all cells and values has L1 sensitivity 2 under
        replace-one neighbouring log entries (the entry leaves one cell and enters one:
        parallel composition over cells); the D features of an entry compose sequentially,
        so the release is (sum_d ε_d)-DP. Every cell of the grid is released, also cells
        without entries. The grid itself (regions, months, feature values) is public input:
        when preprocessing chose it from the data, the record says so.
        """
        layout, exact = CountLayout.from_counts(counts, feature_sizes)
        total, eps = _split_epsilon(epsilon, epsilon_per_feature, len(layout.feature_sizes))
        if aggregate:
            keep = (
                np.ones((layout.R, layout.T), dtype=bool)
                if cells is None
                else check_array(
                    cells, "cells", shape=(layout.R, layout.T), kinds="biu", bounds=(0, 1), integer=True
                ).astype(bool)
            )
            if not keep.any():
                raise ValueError("cells must select at least one cell")
            exact = exact[keep].sum(axis=0)[None, None, :]
            layout = dataclasses.replace(layout, regions=("all regions",), months=(f"{int(keep.sum())} cells",))
        elif cells is not None:
            raise ValueError("cells selects the cells to sum and needs aggregate=True")
        # seed None: every feature's mechanism uses exact discrete Laplace noise on the integer
        # counts with cryptographic randomness; a seed: one shared Generator (reproducible)
        rng = None if seed is None else check_random_state(seed)
        if accountant is not None and not isinstance(accountant, PrivacyAccountant):
            raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
        # every feature's mechanism and noise plan (public inputs only) before the charge: a
        # refused plan (epsilon too small for the exact noise) charges nothing
        noisy, scales, randomness = _noisy_counts(exact, layout, eps, rng)
        record = _count_record(
            layout,
            total,
            eps,
            scales,
            n=max(int(exact[:, :, layout.slices[0]].sum()), 1),
            aggregated=aggregate,
            how={"seeded": seed is not None, **randomness},
        )
        if accountant is not None:  # the last step: once charged, nothing can fail
            accountant.spend(
                total,
                label="war-log count vectors (Laplace, all features)",
                record=[Laplace(epsilon=e, sensitivity=COUNT_SENSITIVITY, seed=rng).record() for e in eps],
            )  # one per feature
        return Release(values=project_nonnegative(noisy), record=record)

    @classmethod
    def published(
        cls,
        y: Any,
        *,
        n: int,
        epsilon: float | None = None,
        epsilon_per_feature: Sequence[float] | None = None,
        feature_sizes: Sequence[int] | None = None,
        layout: CountLayout | None = None,
        aggregated: bool = False,
    ) -> Release:
        """Count vectors ``y`` (R, T, J) that someone else released with this mechanism
        (:meth:`release`: Laplace(2/ε_d) on every cell's vector of feature d, ``n`` log
        entries in all), as the :class:`Release` that :meth:`fit` takes: the record of
        :meth:`release`, marked ``published_externally``, without the randomness claims.
        Nothing is charged (the spend happened where the counts were made).

        Give the grid as ``layout`` (a :class:`CountLayout`, e.g. from the publisher) or as
        ``feature_sizes`` (generic labels); ``epsilon`` (total, split equally) or
        ``epsilon_per_feature`` as in :meth:`release`. ``aggregated=True``: ``y`` (1, 1, J)
        holds corpus-wide counts (fit with ``NaiveBayesHMM(1)``). ``y`` is projected onto
        [0, inf) as :meth:`release` does (post-processing).
        """
        values = check_array(y, "y", ndim=3, kinds="iuf")
        if (layout is None) == (feature_sizes is None):
            raise ValueError("give exactly one of layout (a CountLayout) and feature_sizes")
        if layout is None:
            layout = CountLayout.for_array(values.shape, feature_sizes)
        elif not isinstance(layout, CountLayout):
            raise TypeError(f"layout must be a CountLayout, got {type(layout).__name__}")
        if values.shape != (layout.R, layout.T, layout.J):
            raise ValueError(f"y must have shape {(layout.R, layout.T, layout.J)} for this layout, got {values.shape}")
        if not isinstance(aggregated, bool):
            raise TypeError(f"aggregated must be a bool, got {aggregated!r}")
        if aggregated and values.shape[:2] != (1, 1):
            raise ValueError(f"aggregated counts are one cell: y must have shape (1, 1, J), got {values.shape}")
        total, eps = _split_epsilon(epsilon, epsilon_per_feature, len(layout.feature_sizes))
        record = _count_record(
            layout,
            total,
            eps,
            [COUNT_SENSITIVITY / e for e in eps],
            n=check_int(n, "n", minimum=1),
            aggregated=aggregated,
            how={"published_externally": True},
        )
        return Release(values=project_nonnegative(values), record=record)

    @staticmethod
    def _check_release(release: Release) -> tuple[np.ndarray, CountLayout]:
        if not isinstance(release, Release):
            raise TypeError(f"release must be a Release made by NaiveBayesHMM.release, got {type(release).__name__}")
        rec = release.record
        if (
            rec.mechanism != "laplace"
            or rec.sensitivity != COUNT_SENSITIVITY
            or rec.details.get("projection") != "nonnegative"
            or "layout" not in rec.details
        ):
            raise ValueError(
                "release must come from NaiveBayesHMM.release (Laplace, sensitivity 2, projected, with "
                f"its layout); got mechanism={rec.mechanism!r}, sensitivity={rec.sensitivity!r}"
            )
        layout = CountLayout.from_dict(rec.details["layout"])
        values = release.values
        if values.shape != (layout.R, layout.T, layout.J):
            raise ValueError(f"release values must have shape {(layout.R, layout.T, layout.J)}, got {values.shape}")
        values = check_array(values, "release values")  # finite: a tampered release never reaches the start or Stan
        return values, layout

    def data(
        self, counts: np.ndarray, layout: CountLayout, heldout: Any = None, reference: Sequence[int] | None = None
    ) -> dict[str, Any]:
        """The Stan data of nb_hmm.stan for counts (R, T, J); ``reference`` (0-based value per
        feature of the eta coordinates) defaults to :func:`reference_values`."""
        return _stan_data(
            counts, layout, _check_heldout(heldout, layout), self.n_states, self.alpha, self.beta, reference
        )

    def fit(
        self,
        release: Release,
        *,
        heldout: Any = None,
        init: str | Sequence[Mapping[str, Any]] = "em",
        **sample_kwargs: Any,
    ) -> Posterior:
        """Posterior of (A, theta) given the released counts, plus per-cell state
        probabilities and state draws (post-processing of the release: ε-DP); it carries the
        release's record (``posterior.privacy``).

        ``heldout`` (R, T) bool masks cells out of the likelihood (their state probabilities
        are then predictive). ``init="em"`` (default) starts every chain (jittered) from the
        best of several EM (Baum-Welch) runs on the RELEASED counts
        (:func:`em_initial_values`; post-processing of the release, never the raw counts), with
        a reference value common in every state for the eta coordinates; ``"kmeans"`` from
        one k-means clustering of the released counts per chain (the former start, which
        lets chains settle in different modes on logs like the real war logs),
        ``"random"`` from Stan's random values, ``"dispersed"`` every chain from its own
        start (the best EM solution, then in turn an EM run of its own, a k-means clustering
        and a prior draw, all of the released counts: :func:`dispersed_initial_values`), for
        finding the modes that chains from one start never leave (judge such a fit by
        label-invariant R-hat, combine its chains by stacking,
        :mod:`pystanprivacy.sampling.stacking`); or give one mapping per chain. ``sample_kwargs`` go to
        :meth:`~pystanprivacy.sampling.stan.StanModel.sample` (``max_treedepth`` defaults to
        :data:`DEFAULT_MAX_TREEDEPTH`).
        """
        values, layout = self._check_release(release)
        if release.record.details.get("aggregated") and self.n_states > 1:
            raise ValueError("an aggregated release (corpus-wide counts) has no time structure; fit it with n_states=1")
        return with_record(self._sample(values, layout, heldout, init, sample_kwargs), release.record)

    def fit_nonprivate(
        self,
        counts: Any,
        *,
        feature_sizes: Sequence[int] | None = None,
        heldout: Any = None,
        init: str | Sequence[Mapping[str, Any]] = "em",
        **sample_kwargs: Any,
    ) -> Posterior:
        """Named non-private baseline: the posterior given the exact counts, marked
        ``posterior.privacy == "non-private"``."""
        layout, exact = CountLayout.from_counts(counts, feature_sizes)
        return with_record(self._sample(exact, layout, heldout, init, sample_kwargs), NONPRIVATE)

    def _sample(
        self, counts: np.ndarray, layout: CountLayout, heldout: Any, init: Any, sample_kwargs: Mapping[str, Any]
    ) -> Posterior:
        kwargs, inits, reference = _initial(
            init, counts, layout, self.n_states, heldout, sample_kwargs, prior=(self.alpha, self.beta)
        )
        return self.stan_model.sample(self.data(counts, layout, heldout, reference), init=inits, **kwargs)


class NaiveBayesHMMOPS(_HMMPrior, OPSModel):
    """One-posterior sampling for the naive-Bayes HMM with truncated Dirichlet emissions.

    Parameters
    ----------
    n_states : int
        K latent states (1: naive Bayes).
    multiplier : float, default 100
        M of the truncation a0_d = 1/(M K_d) (the paper: 10 or 100); or give ``a0``.
    a0 : sequence of float, optional
        Truncation points per feature, 0 < a0_d < 1/K_d (overrides ``multiplier``).
    alpha, beta : float, default 1.0
        Dirichlet concentrations (transitions, truncated emissions).
    backend : str, optional

    Notes
    -----
    The target is ``Pr(A, theta, z, X)^(1/T)`` with T = max(1, 2Δ/ε) and Δ from
    :func:`ops_log_likelihood_sensitivity`; Stan samples (A, theta) with z summed out and
    draws z from its tempered conditional, so every iteration is an exact draw of the
    tempered joint once the chain has converged. The target is symmetric in the state
    labels, so chains are aligned before the convergence checks (:func:`align_states`) and
    the released draw gets a uniformly random relabelling (which the exact target has). The
    chains start from an EM solution of the exact counts (``init="em"``): that start is part
    of the sampler run, i.e. of the charged mechanism.

    When the target has several modes that the chains do not cross (the 10-state HMM on logs
    like the real war logs: :func:`~pystanprivacy.experiments.foulds2016.warlogs.non_mixing_war_logs`),
    the gate sees only the modes its chains visit. With ``init="dispersed"`` (every chain from
    its own start, :func:`dispersed_initial_values`) chains in different modes fail R-hat of the
    label-invariant log-likelihood and the gate refuses. With every chain from one start
    (``init="em"``) chains that stay in that mode can pass; the released draw then comes from
    (approximately) the tempered posterior restricted to that mode, not from the target, and
    the epsilon-DP statement, which assumes a draw from the target, does not cover it. The
    record cannot say which case happened. The
    refusal decision looks at the data too (as in the beta-Bernoulli OPS), so
    :meth:`sample_one` charges ε for every attempt, refused or not.
    """

    model_name = "foulds2016/nb_hmm_ops"
    label = "OPS naive-Bayes HMM"

    @classmethod
    def example(cls, n: int = 4320, *, seed: int = 0, n_states: int = 2) -> Example:
        """The data of :meth:`NaiveBayesHMM.example`; the whole run is :meth:`sample`."""
        return dataclasses.replace(
            NaiveBayesHMM.example(n, seed=seed, n_states=n_states), model=cls(n_states), ops_run="sample"
        )

    def __init__(
        self,
        n_states: int,
        *,
        multiplier: float = 100.0,
        a0: Sequence[float] | None = None,
        alpha: float = 1.0,
        beta: float = 1.0,
        backend: str | None = None,
    ) -> None:
        super().__init__(n_states, alpha, beta, backend)
        self.multiplier = _check_multiplier(multiplier)
        # numbers only (never numpy's coercion of strings); 0 < a0_d < 1/K_d is checked once the
        # feature sizes are known
        self._a0 = None if a0 is None else check_array(a0, "a0", ndim=1, kinds="iuf")

    def a0(self, feature_sizes: Sequence[int]) -> np.ndarray:
        """Truncation points for features of these sizes."""
        sizes = _feature_sizes(feature_sizes)
        if self._a0 is not None:
            return _check_a0(self._a0, sizes)
        return ops_truncation(sizes, self.multiplier)

    def sensitivity(self, feature_sizes: Sequence[int]) -> float:
        return ops_log_likelihood_sensitivity(feature_sizes, self.a0(feature_sizes))

    def temperature(self, epsilon: float, feature_sizes: Sequence[int]) -> float:
        """T = max(1, 2Δ/ε) for features of these sizes (:func:`ops_temperature`); ``ValueError``
        naming epsilon and the smallest allowed one when T overflows float64."""
        return ops_temperature_of(epsilon, self.sensitivity(feature_sizes))

    def record(
        self,
        epsilon: float,
        layout: CountLayout,
        n: int,
        *,
        override: bool = False,
        seeded: bool = False,
        select: str = "all-chains",
        min_log_gap: float = DEFAULT_MIN_LOG_GAP,
    ) -> PrivacyRecord:
        """The privacy record of one OPS draw (``override``: ``allow_unconverged`` was used;
        ``seeded``: made with a seed, not secure). It holds public values only: no statistic of
        the run, not even whether a convergence check failed."""
        sizes = layout.feature_sizes
        a0 = self.a0(sizes)
        return PrivacyRecord(
            mechanism="ops",
            epsilon=check_epsilon(epsilon),
            delta=0.0,
            sensitivity=self.sensitivity(sizes),
            n=max(int(n), 1),
            neighbouring="replace-one",
            details={
                "model": self.model_name,
                "n_states": self.n_states,
                "temperature": self.temperature(epsilon, sizes),
                "a0": [float(a) for a in a0],
                "multiplier": None if self._a0 is not None else self.multiplier,
                "sensitivity_is": "log-likelihood sensitivity sum_d log((1-(K_d-1)a0_d)/a0_d) of one log entry",
                "released": "one draw of (theta, A, z), labels uniformly permuted",
                "release_rule": (
                    {
                        "select": "top-mode",
                        "min_log_gap": float(min_log_gap),
                        "rule": "chains grouped into modes by mean log-likelihood; every mode's tempered mass "
                        "estimated by bridge sampling; the draw comes from the chains of the mode of highest "
                        "mass, only when its log mass exceeds every other mode's by min_log_gap plus 3 "
                        "standard errors (refused otherwise)",
                    }
                    if select == "top-mode"
                    else {"select": "all-chains"}
                ),
                "assumption": "the draw comes from the converged target (checked on label-aligned theta, A, "
                "log_lik and the sorted state occupancy: split R-hat, ESS, divergences, tree depth)",
                **convergence_gate(
                    override,
                    "label-aligned theta, A, log_lik and sorted state occupancy: split "
                    "R-hat and ESS; no divergences or tree-depth hits",
                ),
                "layout": layout.to_dict(),
                "structure_from_data": layout.structure_from_data,
                **ops_randomness(bool(seeded), "the released iteration and the relabelling of its states"),
                "reference": "Foulds et al. 2016, Eq. 6-10, Sec. 4.1, Sec. 5 / Fig. 6",
            },
        )

    def data(
        self,
        counts: np.ndarray,
        layout: CountLayout,
        heldout: Any,
        epsilon: float,
        reference: Sequence[int] | None = None,
    ) -> dict[str, Any]:
        """The Stan data of nb_hmm_ops.stan (exact counts: OPS sees the raw data)."""
        mask = _check_heldout(heldout, layout)
        out = _stan_data(counts, layout, mask, self.n_states, self.alpha, self.beta, reference)
        out["a0"] = self.a0(layout.feature_sizes)
        out["temperature"] = self.temperature(epsilon, layout.feature_sizes)
        return out

    def sample(
        self,
        counts: Any,
        *,
        epsilon: float,
        feature_sizes: Sequence[int] | None = None,
        heldout: Any = None,
        seed: SeedLike = None,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        keep_posterior: bool = False,
        init: str | Sequence[Mapping[str, Any]] = "em",
        max_treedepth: int = DEFAULT_MAX_TREEDEPTH,
        adapt_delta: float = 0.8,
        select: str = "all-chains",
        min_log_gap: float = DEFAULT_MIN_LOG_GAP,
    ) -> OPSResult:
        """Run the sampler and release one draw when the convergence checks pass (``thresholds``,
        default :class:`~pystanprivacy.sampling.posterior.Thresholds` ``()``, the gate the HMM studies judge
        every fit by; :meth:`sample_one` releases under :data:`~pystanprivacy.models._ops.OPS_GATE`;
        on the label-aligned draws; or when
        ``allow_unconverged=True``, which the record states); never raises for a failed
        check: the result says what failed and ``release`` (and ``params``) is ``None`` when
        refused. ``params`` unpacks the released draw (:meth:`unpack`), ``details["temperature"]``
        is T.

        Charges no accountant and ``problems`` states statistics of the run: for
        simulations; :meth:`sample_one` is the private release. ``keep_posterior=True``
        keeps the full non-private posterior in the result, for diagnostics only. ``init``
        as in :meth:`NaiveBayesHMM.fit`, but computed from the EXACT counts: the start (EM,
        k-means or dispersed) is part of the sampler run, which is the mechanism; the guarantee rests
        on the released draw coming from the converged target, whatever the start, and
        :meth:`sample_one` charges ε before the start is computed.

        ``select`` is the release rule (:data:`SELECT_RULES`): ``"all-chains"`` (this method's
        default, the former rule) judges and draws from all chains; ``"top-mode"``
        (:meth:`sample_one`'s default) groups the chains into modes, estimates every mode's
        tempered mass by bridge sampling (:func:`~pystanprivacy.models.foulds2016_hmm.modes.hmm_mode_masses`)
        and releases only from the mode of highest mass, when its log mass exceeds every other
        mode's by at least ``min_log_gap`` plus 3 standard errors, every mode's mass rests on at
        least :data:`~pystanprivacy.sampling.modes.MIN_DRAWS_PER_COORDINATE` draws per parameter
        (when there are several), and its own chains pass the gate; otherwise it refuses (``problems`` says why, ``details["modes"]`` gives the modes,
        their log masses, the gap and the chain of the released draw; ``allow_unconverged=True``
        releases from the top mode's chains whatever the gap and the gate say). With a seed, the
        start, Stan's seed, the iteration and the relabelling come from its Generator
        (reproducible, not secure: warned once); without one, Stan gets 31 bits from
        ``secrets`` and the iteration and relabelling come from ``secrets``.
        """
        layout, exact = CountLayout.from_counts(counts, feature_sizes)
        epsilon = check_epsilon(epsilon)
        allow_unconverged = check_allow_unconverged(allow_unconverged)
        select, min_log_gap = _check_select(select, min_log_gap)
        kwargs, inits, reference = _initial(
            init,
            exact,
            layout,
            self.n_states,
            heldout,
            dict(
                seed=seed,
                chains=chains,
                warmup=warmup,
                draws=draws,
                max_treedepth=max_treedepth,
                adapt_delta=adapt_delta,
            ),
            prior=(self.alpha, self.beta),
        )
        rng = kwargs["seed"] if seed is not None else None
        if rng is None:
            kwargs["seed"] = None  # Stan's seed from secrets (the start keeps its OS-entropy Generator)
        data = self.data(exact, layout, heldout, epsilon, reference)
        post = self.stan_model.sample(data, init=inits, **kwargs)
        details: dict[str, Any] = {"temperature": self.temperature(epsilon, layout.feature_sizes)}
        problems: list[str] = []
        judged = post
        if select == "top-mode":
            judged, problems, details["modes"] = self._top_mode(post, data, min_log_gap, rng)
        aligned = align_states(judged)
        # a simulation judges by Thresholds(), as every other fit of the studies does; sample_one passes OPS_GATE
        problems += convergence_problems(judged, aligned, thresholds or Thresholds())
        release = None
        if not problems or allow_unconverged:
            # one iteration uniformly at random, then a uniformly random relabelling
            if rng is not None:
                warn_reproducible_not_secure()
                i = int(rng.integers(aligned.theta.shape[0]))
            else:
                i = secure_index(aligned.theta.shape[0])
            one = _permute(
                HMMDraws(
                    theta=aligned.theta[i : i + 1],
                    A=aligned.A[i : i + 1],
                    log_lik=aligned.log_lik[i : i + 1],
                    state_prob=None,
                    z=aligned.z[i : i + 1],
                    chain=aligned.chain[i : i + 1],
                    permutations=aligned.permutations,
                ),
                rng.permutation(self.n_states) if rng is not None else secure_permutation(self.n_states),
            )
            values = np.concatenate([one.theta[0].ravel(), one.A[0].ravel(), one.z[0].ravel().astype(float)])
            # the public override, never whether a check failed (a statistic of the private run)
            record = self.record(
                epsilon,
                layout,
                int(exact[:, :, layout.slices[0]].sum()),
                override=allow_unconverged,
                seeded=rng is not None,
                select=select,
                min_log_gap=min_log_gap,
            )
            release = Release(values=values, record=record)
            if "modes" in details:
                chains = details["modes"]["top_chains"]
                details["modes"]["released_chain"] = int(chains[int(one.chain[0])])
        return OPSResult(
            release=release,
            problems=problems,
            params=None if release is None else self.unpack(release),
            details=details,
            posterior=with_record(post, NONPRIVATE) if keep_posterior else None,
        )

    def _top_mode(
        self, post: Posterior, data: Mapping[str, Any], min_log_gap: float, rng: np.random.Generator | None
    ) -> tuple[Posterior, list[str], dict[str, Any]]:
        """The rule ``select="top-mode"``: the chains of the mode of highest estimated tempered
        mass (as a Posterior of those chains), the rule's problems (empty: decisive), and what
        it found (statistics of the private run: for :meth:`sample`'s caller only)."""
        log_lik = post.draws("log_lik", combine_chains=False)
        found = hmm_mode_masses(
            post,
            data=data,
            stan_model=self.stan_model,
            tol=mode_tolerance(log_lik),
            seed=rng if rng is not None else np.random.default_rng(),  # OS entropy when unseeded
        )
        masses = found.masses
        top_mode = masses.top
        chains = found.modes.members(top_mode)
        gap, gap_sd = masses.log_gap(), masses.gap_sd()
        problems = []
        if not masses.reliable:
            problems.append(
                f"the masses of the {found.modes.n_modes} modes found cannot be compared: a mode's proposal was "
                f"fitted to {masses.draws_per_coordinate:.3g} draws per parameter, fewer than "
                f"{MIN_DRAWS_PER_COORDINATE:g} (more draws, or more chains per mode)"
            )
        elif gap - 3.0 * gap_sd < min_log_gap:
            problems.append(
                f"no decisive mode: the top mode's log tempered mass exceeds the next by {gap:.3g} "
                f"(standard error {gap_sd:.3g}), less than min_log_gap={min_log_gap:g} plus 3 standard errors"
            )
        info = {
            "n_modes": found.modes.n_modes,
            "chain_modes": found.modes.labels.tolist(),
            "mean_log_lik": found.modes.centres[:, 0].tolist(),
            "log_mass": masses.log_mass.tolist(),
            "log_mass_sd": masses.log_sd.tolist(),
            "top_mode": top_mode,
            "top_chains": chains.tolist(),
            "log_gap": gap,
            "log_gap_sd": gap_sd,
            "reliable": masses.reliable,
            "seconds": found.seconds,
        }
        return select_chains(post, chains), problems, info

    def sample_one(
        self,
        counts: Any,
        *,
        epsilon: float,
        feature_sizes: Sequence[int] | None = None,
        heldout: Any = None,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        init: str | Sequence[Mapping[str, Any]] = "dispersed",
        max_treedepth: int = DEFAULT_MAX_TREEDEPTH,
        adapt_delta: float = 0.8,
        select: str = "top-mode",
        min_log_gap: float = DEFAULT_MIN_LOG_GAP,
    ) -> OPSResult:
        """Release one draw of (theta, A, z): ε-DP for a draw from the converged target.

        The default rule (``init="dispersed"``, ``select="top-mode"``, see :meth:`sample`):
        every chain from its own start (computed from the exact counts, inside the charged
        run), the chains grouped into modes, each mode's tempered mass estimated by bridge
        sampling, and a draw released only from the mode of highest mass when its log mass
        exceeds every other mode's found by ``min_log_gap`` (default
        :data:`~pystanprivacy.models.foulds2016_hmm.modes.DEFAULT_MIN_LOG_GAP`) plus 3 standard
        errors and that mode's own chains (at least 2) pass the gate; refused otherwise. What
        this does and does not guarantee: SECURITY.md, "The OPS gate and multimodal targets".
        ``select="all-chains"`` with ``init="em"`` is the former rule (all chains from one EM
        start, judged and drawn together).

        The result's ``release`` is the draw with its record (its ``values`` pack theta, A
        and z), ``params`` the draw unpacked (:meth:`unpack`), ``details["temperature"]`` T;
        ``problems`` lists the checks that failed (empty unless ``allow_unconverged=True``
        released anyway): a statistic of the private run, for the data holder; publish
        ``release`` only. The
        accountant is charged ε for every attempt, before sampling, whether or not a draw is
        then released (the refusal depends on the data, so it is an output too);
        ``BudgetExceededError`` when the budget cannot cover it (nothing is charged or run).
        A failed convergence check raises :class:`~pystanprivacy.sampling.posterior.ConvergenceError`
        (ε stays charged), whose message names only the public thresholds and settings,
        unless ``allow_unconverged=True``, which the record states (``convergence_override=True``
        and ``convergence_gate``, whether or not a check failed: that is a statistic of the
        private run and is not recorded). A seed gives
        reproducibility, not security (the record says ``secure: False``; warned once).
        """
        layout, _ = CountLayout.from_counts(counts, feature_sizes)
        epsilon = check_epsilon(epsilon)
        self.temperature(epsilon, layout.feature_sizes)  # a0 must fit these features; T must be finite
        _check_heldout(heldout, layout)
        settings = {
            "warmup": warmup,
            "draws": draws,
            "chains": chains,
            "adapt_delta": adapt_delta,
            "max_treedepth": max_treedepth,
        }
        rng = check_ops_call(accountant, seed, thresholds, allow_unconverged, settings)
        _check_init(init, chains)
        select, min_log_gap = _check_select(select, min_log_gap)
        charge_attempt(accountant, epsilon, self.label)
        result = self.sample(
            counts,
            epsilon=epsilon,
            feature_sizes=feature_sizes,
            heldout=heldout,
            seed=rng,
            thresholds=thresholds or OPS_GATE,
            allow_unconverged=allow_unconverged,
            init=init,
            select=select,
            min_log_gap=min_log_gap,
            **settings,
        )
        if result.release is None:
            raise ConvergenceError.refused(
                self.label,
                epsilon=epsilon,
                thresholds=thresholds or OPS_GATE,
                checked=["label-aligned theta", "A", "log_lik", "sorted state occupancy"],
                settings=settings,
                charged=accountant is not None,
            )
        return result

    @staticmethod
    def unpack(release: Release) -> dict[str, np.ndarray]:
        """``{"theta": (K, J), "A": (K + 1, K), "z": (R, T), 0-based}`` of an OPS release."""
        if (
            not isinstance(release, Release)
            or release.record.mechanism != "ops"
            or "layout" not in release.record.details
        ):
            raise TypeError("release must be a Release made by NaiveBayesHMMOPS.sample_one")
        layout = CountLayout.from_dict(release.record.details["layout"])
        K = int(release.record.details["n_states"])
        v = release.values
        n_theta, n_a = K * layout.J, (K + 1) * K
        if v.shape != (n_theta + n_a + layout.R * layout.T,):
            raise ValueError(f"release values have shape {v.shape}, which does not match its layout")
        return {
            "theta": v[:n_theta].reshape(K, layout.J),
            "A": v[n_theta : n_theta + n_a].reshape(K + 1, K),
            "z": v[n_theta + n_a :].reshape(layout.R, layout.T).astype(np.int64),
        }
