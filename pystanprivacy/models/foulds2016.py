"""Beta-Bernoulli models of Foulds et al. (2016): Laplace mechanism vs one-posterior sampling.

References
----------
.. [1] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri (2016), "On the theory and
   practice of privacy-preserving Bayesian data analysis", UAI. Sec. 3.1 (Eq. 10, 14, 15:
   OPS at temperature T for the truncated beta-Bernoulli), Sec. 3.2 (Eq. 16-17: Laplace
   mechanism on the sufficient statistics, L1 sensitivity 2).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._validation import (
    SeedLike,
    check_array,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
    check_real,
)
from ..privacy.mechanisms import Laplace, project_nonnegative
from ..privacy.records import (
    PrivacyAccountant,
    PrivacyRecord,
    Release,
    warn_reproducible_not_secure,
)
from ..sampling.posterior import ConvergenceError, Posterior, Thresholds
from ._ops import (
    OPS_GATE,
    charge_attempt,
    check_allow_unconverged,
    check_ops_call,
    convergence_gate,
    ops_randomness,
    ops_temperature_of,
    secure_index,
)
from .base import (
    NONPRIVATE,
    Example,
    Model,
    OPSModel,
    OPSResult,
    check_release_matches_record,
    published_laplace_record,
    with_record,
)

#: L1 sensitivity of the aggregate statistics (n_+, n_-) under replace-one (Eq. 17)
COUNT_SENSITIVITY = 2.0


def _check_binary(x: Any, name: str = "x") -> np.ndarray:
    """Binary data as an int array of shape (N,) or (R, N) (R independent data sets)."""
    arr = check_array(x, name, ndim=(1, 2), kinds="biuf", bounds=(0, 1), integer=True)
    if arr.size == 0:  # no observation, or (0, N): no data set
        raise ValueError(
            f"{name} must hold at least one observation (and, for shape (R, N), at least one "
            f"data set), got shape {arr.shape}"
        )
    return arr


def sufficient_statistics(x: Any) -> np.ndarray:
    """``(n_+, n_-)`` of binary data: shape (2,) for (N,) input, (R, 2) for (R, N)."""
    arr = _check_binary(x)
    ones = arr.sum(axis=-1)
    return np.stack([ones, arr.shape[-1] - ones], axis=-1).astype(float)


def _check_a0(a0: Any) -> float:
    a0 = check_real(a0, "a0")
    if not 0.0 < a0 < 0.5:
        raise ValueError(f"a0 must be in (0, 0.5), got {a0!r}")
    return a0


def log_likelihood_sensitivity(a0: float) -> float:
    """Δ log Pr(θ, X) = log((1 − a0)/a0) for p truncated to [a0, 1 − a0] (Eq. 15)."""
    a0 = _check_a0(a0)
    return math.log1p(-a0) - math.log(a0)


def ops_temperature(epsilon: float, a0: float) -> float:
    """Temperature T = max(1, 2Δ/ε) that makes one draw ε-DP (Eq. 10 and 14); ``ValueError``
    naming epsilon and the smallest allowed one when T overflows float64
    (:func:`~pystanprivacy.models._ops.ops_temperature_of`)."""
    return ops_temperature_of(epsilon, log_likelihood_sensitivity(a0))


def _check_counts(values: Any, name: str) -> np.ndarray:
    """Released counts (n_+, n_-) as floats of shape (2,) or (R, 2), R >= 1: numbers only (a
    forged string array is refused, never coerced) and finite."""
    values = check_array(values, name, ndim=(1, 2), kinds="iuf")
    if values.shape[-1] != 2 or values.shape[0] == 0:
        raise ValueError(f"{name} must have shape (2,) or (R, 2) with R >= 1, got {values.shape}")
    return values


def _release_details(datasets: int) -> dict[str, Any]:
    """What the record of a count release says beyond the mechanism (release and published)."""
    return {
        "statistic": "beta_bernoulli_counts (n_+, n_-)",
        "projection": "nonnegative",
        "datasets": datasets,
        "reference": "Foulds et al. 2016, Eq. 16-17",
    }


#: success probability of the simulated records of the examples
EXAMPLE_P = 0.3


def _binary_records(n: int, seed: int) -> np.ndarray:
    """``n`` simulated records, 1 with probability :data:`EXAMPLE_P` (the examples' data)."""
    rng = np.random.default_rng(seed)
    return (rng.random(check_int(n, "n", minimum=1)) < EXAMPLE_P).astype(np.int64)


class _BetaPrior:
    """The Beta(prior_alpha, prior_beta) prior and the Stan data of counts, shared by the
    Laplace and the OPS model."""

    def __init__(self, prior_alpha: float, prior_beta: float, backend: str | None) -> None:
        self.prior_alpha = check_positive(prior_alpha, "prior_alpha")
        self.prior_beta = check_positive(prior_beta, "prior_beta")
        self.backend = backend

    def _counts_data(self, counts: np.ndarray) -> dict[str, Any]:
        """Stan data of counts (2,) or (R, 2): one component per data set."""
        counts = np.atleast_2d(counts)
        return {
            "R": counts.shape[0],
            "successes": counts[:, 0],
            "failures": counts[:, 1],
            "prior_alpha": self.prior_alpha,
            "prior_beta": self.prior_beta,
        }


class BetaBernoulli(_BetaPrior, Model):
    """Beta-Bernoulli posterior from Laplace-privatised counts (Eq. 16-17), and the named
    non-private baseline.

    Parameters
    ----------
    prior_alpha, prior_beta : float, default 1.0
        Beta prior.
    backend : str, optional
        Stan backend (see :func:`pystanprivacy.sampling.backends.select_backend`).

    Examples
    --------
    >>> model = BetaBernoulli()
    >>> release = BetaBernoulli.release(x, epsilon=1.0)   # doctest: +SKIP
    >>> posterior = model.fit(release)                   # doctest: +SKIP
    >>> posterior.privacy["epsilon"]                     # doctest: +SKIP
    1.0
    """

    model_name = "foulds2016/beta_bernoulli"

    def __init__(self, *, prior_alpha: float = 1.0, prior_beta: float = 1.0, backend: str | None = None) -> None:
        super().__init__(prior_alpha, prior_beta, backend)

    @classmethod
    def release(
        cls,
        x: Any,
        *,
        epsilon: float,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Release ``proj(S(X) + Laplace(2/ε))`` for binary data ``x`` (Eq. 16).

        ``x`` of shape (N,) is one data set; (R, N) is R independent data sets (R
        releases, one per data set, each ε-DP for its own data; the accountant is charged
        once: the data sets hold different people, so parallel composition applies).
        Replace-one neighbours, so N is public.
        """
        arr = _check_binary(x)
        stats = sufficient_statistics(arr)
        mech = Laplace(epsilon=epsilon, sensitivity=COUNT_SENSITIVITY, seed=seed)
        n_sets = 1 if arr.ndim == 1 else arr.shape[0]
        # R data sets of different people: parallel composition, the accountant pays ε once
        # integer counts: without a seed, exact discrete Laplace noise on the integers
        raw = mech.release(
            stats.astype(np.int64),
            accountant=accountant,
            n=int(arr.shape[-1]),
            bounds=(0.0, 1.0),
            label="beta-Bernoulli counts",
        )
        record = dataclasses.replace(raw.record, details={**raw.record.details, **_release_details(n_sets)})
        return Release(values=project_nonnegative(raw.values), record=record)

    @classmethod
    def published(cls, y: Any, *, n: int, epsilon: float) -> Release:
        """Counts ``y`` = (n_+, n_-) + Laplace(2/ε) released by someone else (each data set of
        ``n`` records, replace-one neighbours), as the :class:`Release` that :meth:`fit`
        takes: the record of :meth:`release`, marked ``published_externally``, without the
        randomness claims. Nothing is charged (the spend happened where the counts were made).

        ``y`` has shape (2,) or (R, 2); it is projected onto [0, inf) as :meth:`release` does
        (post-processing: already projected counts stay as they are).
        """
        values = _check_counts(y, "y")
        record = published_laplace_record(
            epsilon=epsilon,
            sensitivity=COUNT_SENSITIVITY,
            n=n,
            bounds=(0.0, 1.0),
            details=_release_details(1 if values.ndim == 1 else values.shape[0]),
        )
        return Release(values=project_nonnegative(values), record=record)

    @staticmethod
    def _check_release(release: Release) -> np.ndarray:
        if not isinstance(release, Release):
            raise TypeError(f"release must be a Release made by BetaBernoulli.release, got {type(release).__name__}")
        rec = release.record
        if (
            rec.mechanism != "laplace"
            or rec.details.get("projection") != "nonnegative"
            or rec.sensitivity != COUNT_SENSITIVITY
        ):
            raise ValueError(
                "release must come from BetaBernoulli.release (Laplace, sensitivity 2, projected); "
                f"got mechanism={rec.mechanism!r}, sensitivity={rec.sensitivity!r}"
            )
        values = _check_counts(release.values, "release values")
        # check_array refused NaN/inf; a projected release is also >= 0 (forged values are not)
        if not np.all(values >= 0):
            raise ValueError(
                "release values must be finite and >= 0 (BetaBernoulli.release projects the "
                "noisy counts onto [0, inf)); this release was not made by it"
            )
        # as many data sets (rows of counts) as the record states
        check_release_matches_record(release, np.atleast_2d(values), model="BetaBernoulli", datasets_axis=0)
        return values

    def fit(self, release: Release, **sample_kwargs: Any) -> Posterior:
        """Posterior of p given the released counts (post-processing: ε-DP); it carries the
        release's record (``posterior.privacy``).

        One Stan run covers every data set of the release; ``p`` has one entry per set.
        ``sample_kwargs`` go to :meth:`pystanprivacy.sampling.stan.StanModel.sample`.
        """
        data = self._counts_data(self._check_release(release))  # before self.stan_model: no compile for a refusal
        post = self.stan_model.sample(data, **sample_kwargs)
        return with_record(post, release.record)

    @classmethod
    def example(cls, n: int = 100, *, seed: int = 0) -> Example:
        """``n`` Bernoulli(0.3) records ``x`` and ``epsilon = 1`` (:class:`~pystanprivacy.models.base.Example`)."""
        return Example(cls(), {"x": _binary_records(n, seed)}, {"epsilon": 1.0}, "x", truth={"p": EXAMPLE_P})

    def fit_nonprivate(self, x: Any, **sample_kwargs: Any) -> Posterior:
        """Named non-private baseline: the exact posterior from the raw counts, marked
        ``posterior.privacy == "non-private"``."""
        post = self.stan_model.sample(self._counts_data(sufficient_statistics(x)), **sample_kwargs)
        return with_record(post, NONPRIVATE)

    def beta_parameters(self, counts: np.ndarray) -> np.ndarray:
        """Closed-form Beta(a, b) parameters of the posterior for counts (…, 2)."""
        return np.asarray(counts, dtype=float) + np.array([self.prior_alpha, self.prior_beta])


def gate_per_dataset(post: Posterior, thresholds: Thresholds) -> tuple[np.ndarray, list[str]]:
    """The convergence gate of a beta-Bernoulli OPS run over R data sets: which components of
    ``p`` pass (bool array (R,)) and the failed checks in words.

    A component passes when its split R-hat is finite and at most ``thresholds.max_rhat`` and
    its bulk and tail ESS are at least ``thresholds.min_ess_per_chain`` per chain; none passes
    when the run had more divergent transitions, or more iterations at the maximum tree depth,
    than ``thresholds`` allow (the run is shared). The statistics are those of
    :meth:`~pystanprivacy.sampling.posterior.Posterior.rhat` and ``ess_bulk`` / ``ess_tail``.

    References
    ----------
    .. [1] Vehtari, Gelman, Simpson, Carpenter and Bürkner (2021), "Rank-normalization,
       folding, and localization: an improved R-hat for assessing convergence of MCMC",
       Bayesian Analysis 16(2), 667-718.
    """
    t = thresholds
    chains, draws = post.num_chains, post.num_draws
    rhat = np.atleast_1d(post.rhat()["p"])
    n_sets = rhat.shape[0]
    ok = np.ones(n_sets, dtype=bool)
    problems: list[str] = []
    if post.num_divergences > t.max_divergences or post.num_max_treedepth > t.max_treedepth_fraction * chains * draws:
        ok[:] = False
        problems += [q for q in post.check(t) if "divergent" in q or "max_treedepth" in q]
    ess = np.minimum(np.atleast_1d(post.ess_bulk()["p"]), np.atleast_1d(post.ess_tail()["p"]))
    bad = (rhat > t.max_rhat) | (ess < t.min_ess_per_chain * chains) | ~np.isfinite(rhat)
    if bad.any():
        problems.append(
            f"{int(bad.sum())} of {n_sets} data sets failed split R-hat <= {t.max_rhat} or "
            f"ESS >= {t.min_ess_per_chain * chains:.0f}"
        )
    return ok & ~bad, problems


class BetaBernoulliOPS(_BetaPrior, OPSModel):
    """One-posterior sampling from the truncated, tempered beta-Bernoulli posterior
    (Eq. 14-15): one draw is ε-DP when it comes from the converged target.

    Parameters
    ----------
    a0 : float, default 0.2
        Truncation point, p ∈ [a0, 1 − a0], 0 < a0 < 1/2.
    prior_alpha, prior_beta : float, default 1.0
    backend : str, optional
    """

    model_name = "foulds2016/beta_bernoulli_ops"
    label = "OPS beta-Bernoulli"

    def __init__(
        self, *, a0: float = 0.2, prior_alpha: float = 1.0, prior_beta: float = 1.0, backend: str | None = None
    ) -> None:
        super().__init__(prior_alpha, prior_beta, backend)
        self.a0 = _check_a0(a0)

    def temperature(self, epsilon: float) -> float:
        """T = max(1, 2Δ/ε), Δ = log((1 − a0)/a0)."""
        return ops_temperature(epsilon, self.a0)

    def record(
        self, epsilon: float, n: int, *, override: bool = False, datasets: int = 1, seeded: bool = False
    ) -> PrivacyRecord:
        """The privacy record of one OPS draw (``override``: ``allow_unconverged`` was used;
        ``seeded``: made with a seed, not secure). It holds public values only: no statistic of
        the run, not even whether a convergence check failed (:func:`~pystanprivacy.models._ops.convergence_gate`)."""
        return PrivacyRecord(
            mechanism="ops",
            epsilon=check_epsilon(epsilon),
            delta=0.0,
            sensitivity=log_likelihood_sensitivity(self.a0),
            bounds=(0.0, 1.0),
            n=n,
            neighbouring="replace-one",
            details={
                "model": self.model_name,
                "temperature": self.temperature(epsilon),
                "a0": self.a0,
                "sensitivity_is": "log-likelihood sensitivity log((1-a0)/a0), Eq. 15",
                "assumption": "the draw comes from the converged target (checked: split R-hat, ESS, divergences, tree depth)",
                **convergence_gate(
                    override, "per data set split R-hat and ESS of p; no divergences or tree-depth hits in the run"
                ),
                "datasets": datasets,
                **ops_randomness(bool(seeded)),
                "reference": "Foulds et al. 2016, Eq. 10, 14, 15",
            },
        )

    def data(self, counts: np.ndarray, epsilon: float) -> dict[str, Any]:
        """The Stan data of beta_bernoulli_ops.stan for counts (2,) or (R, 2) (exact counts:
        OPS sees the raw data)."""
        return {**self._counts_data(counts), "a0": self.a0, "temperature": self.temperature(epsilon)}

    @classmethod
    def example(cls, n: int = 100, *, seed: int = 0) -> Example:
        """``n`` Bernoulli(0.3) records ``x`` and ``epsilon = 1``; the whole run is
        :meth:`sample_batch` (:class:`~pystanprivacy.models.base.Example`)."""
        return Example(
            cls(),
            {"x": _binary_records(n, seed)},
            {"epsilon": 1.0},
            "x",
            truth={"p": EXAMPLE_P},
            ops_run="sample_batch",
        )

    def sample_batch(
        self,
        x: Any,
        *,
        epsilon: float,
        seed: SeedLike = None,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        keep_posterior: bool = False,
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
    ) -> OPSResult:
        """One OPS draw for each of R independent data sets ``x`` (R, N) from one Stan run.

        The joint target is the product of the R targets, so each component is an exact
        draw from its own target. Per data set, the draw is released only if its split
        R-hat and ESS pass (and the run had no divergences / tree-depth hits); otherwise
        ``params["p"]`` is NaN there and ``released_mask`` False. ``allow_unconverged=True``
        releases anyway and says so in the record (``convergence_override=True`` whether or
        not a check failed). The result's ``release`` holds the released draws in data-set
        order (``None`` when none was released), ``details["temperature"]`` is T, and
        ``posterior`` (only with ``keep_posterior=True``) every draw of the run, marked
        non-private.

        Charges no accountant, and ``problems`` states statistics of the run: for
        simulations; :meth:`sample_one` is the private release. ``thresholds`` defaults to
        :class:`~pystanprivacy.sampling.posterior.Thresholds` ``()`` (split R-hat <= 1.01, ESS >= 100 per
        chain: the gate the Foulds studies judge every fit by, and their committed results were made
        with); :meth:`sample_one` releases under :data:`~pystanprivacy.models._ops.OPS_GATE`. With a seed, Stan's seed
        and the released (chain, iteration) indices come from its Generator (reproducible,
        not secure: warned once); without one, Stan gets 31 bits from ``secrets`` and the
        indices come from ``secrets``.
        """
        arr = _check_binary(x)
        epsilon = check_epsilon(epsilon)
        rng = None if seed is None else check_random_state(seed)
        allow_unconverged = check_allow_unconverged(allow_unconverged)
        counts = np.atleast_2d(sufficient_statistics(arr))
        post = self.stan_model.sample(
            self.data(counts, epsilon),
            chains=chains,
            warmup=warmup,
            draws=draws,
            seed=rng,
            adapt_delta=adapt_delta,
            max_treedepth=max_treedepth,
        )
        p = post.draws("p", combine_chains=False)  # (chains, draws, R)
        n_sets = p.shape[2]
        # a simulation judges by Thresholds(), as every other fit of the studies does; sample_one passes OPS_GATE
        ok, problems = gate_per_dataset(post, thresholds or Thresholds())
        if allow_unconverged:
            ok[:] = True
        if rng is not None:
            warn_reproducible_not_secure()
            chain_idx = rng.integers(p.shape[0], size=n_sets)
            draw_idx = rng.integers(p.shape[1], size=n_sets)
        else:
            chain_idx = np.array([secure_index(p.shape[0]) for _ in range(n_sets)], dtype=np.int64)
            draw_idx = np.array([secure_index(p.shape[1]) for _ in range(n_sets)], dtype=np.int64)
        chosen = p[chain_idx, draw_idx, np.arange(n_sets)]
        # the record states the public override, never whether a check failed (a statistic of the run)
        record = self.record(
            epsilon, int(arr.shape[-1]), override=allow_unconverged, datasets=n_sets, seeded=rng is not None
        )
        return OPSResult(
            release=Release(values=chosen[ok], record=record) if ok.any() else None,
            problems=problems,
            params={"p": np.where(ok, chosen, np.nan)},
            details={"temperature": self.temperature(epsilon)},
            posterior=with_record(post, NONPRIVATE) if keep_posterior else None,
            released_mask=ok,
        )

    def sample_one(
        self,
        x: Any,
        *,
        epsilon: float,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
    ) -> OPSResult:
        """Release one draw of p (ε-DP for a draw from the converged target).

        Parameters
        ----------
        x : array_like of {0, 1}, shape (N,)
            One data set.
        epsilon : float
            Privacy level of the attempt; T = :meth:`temperature` (ε).
        accountant : PrivacyAccountant, optional
            Charged ε for every attempt, before the Stan run, whether or not the draw is
            then released (the refusal depends on the data, so it is an output too).
        seed : int, Generator or None
            Reproducibility, not security (the record says ``secure: False``; warned once).
            ``None``: Stan seeded with 31 bits from ``secrets``, the draw chosen with ``secrets``.
        chains, warmup, draws, adapt_delta, max_treedepth
            NUTS settings; the draw is chosen uniformly over all chains and iterations.
        thresholds : Thresholds, optional
            Convergence gate (default :data:`~pystanprivacy.models._ops.OPS_GATE`).
        allow_unconverged : bool
            Release even if a check failed; the record then has ``convergence_override=True``
            (whether or not a check failed: that is a statistic of the private run and is not
            recorded) and ``convergence_gate`` says the gate was not enforced.

        Returns
        -------
        OPSResult
            ``release``: the draw (``values`` of shape (1,)) and its record; ``params["p"]``
            the same draw; ``details["temperature"]`` T. ``problems`` lists the checks that
            failed (empty unless ``allow_unconverged=True`` released anyway): a statistic of
            the private run, for the data holder; publish ``release`` only.

        Raises
        ------
        BudgetExceededError
            The budget cannot cover ε: nothing is charged or run.
        ConvergenceError
            The run failed the convergence checks: no draw, ε stays charged; the message
            names only the public thresholds and settings, no statistic of the run.
        """
        arr = _check_binary(x)
        if arr.ndim != 1:
            raise ValueError(f"x must be one data set of shape (N,), got shape {arr.shape}; use sample_batch")
        epsilon = check_epsilon(epsilon)
        self.temperature(epsilon)  # T must be a finite float64: refused before the charge
        settings = {
            "warmup": warmup,
            "draws": draws,
            "chains": chains,
            "adapt_delta": adapt_delta,
            "max_treedepth": max_treedepth,
        }
        rng = check_ops_call(accountant, seed, thresholds, allow_unconverged, settings)
        charge_attempt(accountant, epsilon, self.label)
        batch = self.sample_batch(
            arr[None, :],
            epsilon=epsilon,
            seed=rng,
            thresholds=thresholds or OPS_GATE,
            allow_unconverged=allow_unconverged,
            **settings,
        )
        if not batch.released_mask[0]:
            raise ConvergenceError.refused(
                self.label,
                epsilon=epsilon,
                thresholds=thresholds or OPS_GATE,
                checked=["p"],
                settings=settings,
                charged=accountant is not None,
            )
        return dataclasses.replace(batch, released_mask=None)


__all__ = [
    "BetaBernoulli",
    "BetaBernoulliOPS",
    "COUNT_SENSITIVITY",
    "gate_per_dataset",
    "log_likelihood_sensitivity",
    "ops_temperature",
    "sufficient_statistics",
]
