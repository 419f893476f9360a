#!/usr/bin/env python
"""Hostile-input census (issue 17, "close the side channels").

Every public entry point of :mod:`pystanprivacy` that takes private data or privacy
parameters is called with a fixed, deterministic list of inputs that its documentation
declares invalid, one argument at a time (every other argument valid), and each call is
classified:

* **rejected clearly** -- a ``TypeError`` or ``ValueError`` (or a documented subclass such
  as ``BudgetExceededError``) whose message names the argument (or a documented alias, as a
  whole word), with no private sentinel value in the message or in the exception chain as a
  traceback prints it, no warning (e.g. a numpy ``RuntimeWarning`` from a silent NaN), no
  log record quoting the sentinel, and no charge to the ``PrivacyAccountant`` passed in;
* **accepted silently** -- the call returned normally;
* **crashed unclearly** -- anything else: another exception type, a message that does not
  name the argument, the sentinel in a message / chained exception / warning / log record, a
  charge before failing, or reaching Stan. Stan is never run: while the census runs
  ``StanModel.get`` hands out a trap whose ``sample``/``fixed_param`` raise
  :class:`_WouldRunStan` (and ``StanModel.__init__``, ``_run`` and ``stanc`` raise it too, so
  nothing is compiled); reaching it counts as crashed unclearly because validation must come
  before any Stan run.

Before the hostile cases of an entry point, one valid call checks that the census itself is
sound (it must return, or reach the Stan trap for ``fit``/OPS entry points); a failed valid
call is listed as a crashed row ``(valid call)``.

Private data hold the sentinel ``12345.678901`` wherever the domain allows it (e.g. values
that are clipped), so that a message quoting data is caught. Released values (what ``fit``
takes) are public and hold no sentinel.

Run ``python scripts/hostile_census.py``: prints a Markdown table (one row per entry point),
a totals line and every case that was not rejected clearly; exits 1 when any input was
accepted silently or crashed unclearly.

Inputs left out because the documentation declares them **valid** (extreme but accepted,
clipped or clamped), so they are not hostile:

* finite data of any magnitude for the additive mechanisms, ``Clip``, ``ClipL2``,
  ``project_*``, ``clipped_laplace_reports``, ``gaussian_reports``, ``GaussianLDP`` /
  ``ExponentialLDP`` (clamped to the representable range or clipped to the declared bounds /
  norm: "no finite value is refused"), including 1e308, 5e-324 and the sentinel; likewise
  rows of ``x`` above ``R`` and ``|y|`` above ``R_y`` in the kulkarni2022_regression releases
  (documented as clipped, never refused), and any finite ``X`` / regression ``y`` of jewson2023;
* ``huge`` (1e308) and ``tiny`` (5e-324) positive epsilon, sensitivity, scale, radius,
  total, max_norm, R, R_y and bounds: finite and > 0 as documented (a range refusal of such
  values is allowed but not required); the positive tiny delta 5e-324 for Gaussian
  mechanisms; huge positive ``scale_ratios`` of ``gaussian_reports`` ("positive
  multipliers");
* huge ints for ``n``, ``changed``, ``d`` and the sampler settings (valid ints; a huge ``d``
  is a memory problem, not a validation one);
* extra axes for ``Laplace``/``Gaussian``/``AnalyticGaussian``/``RandomizedResponse``/``OUE``
  ``release``/``randomise``, ``Clip`` and ``project_nonnegative`` (any shape is documented);
* empty input to ``randomise``, ``Clip``, ``ClipL2`` and ``project_nonnegative`` (only
  ``release`` and the report functions document refusing it);
* bool arrays where the domain is bits / integers / ``biuf`` (RR, OUE, the beta-Bernoulli,
  binomial and regression label data, jewson2023 ``X``);
* ``None`` for every optional argument that defaults to ``None`` (accountant, seed, label,
  n, bounds, changed, scale_ratios, max_norm, budget_split, details, thresholds);
* ``details`` that repeat keys of the record (documented as merged);
* a ``NaiveBayesHMMOPS(a0=...)`` that is only refused when ``sample_one`` knows the feature
  sizes (it is tried through ``sample_one``, construction and call together).

Entry points not covered (no private data or privacy parameter, or non-release helpers):
``log_prob``, ``estimate_mean``/``estimate_counts``, ``check_ldp_release``, the models'
``data``/``check_release``/``log_posterior``/``start_values``/``unpack`` (``fit`` calls the
first ones), ``fit_nonprivate``, the non-private baselines, ``BinomialBetaExact.release``
(inherited from ``BinomialBeta``) and ``NaiveBayesHMM.release(aggregate=True, cells=...)``.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import math
import re
import sys
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pystanprivacy.privacy import ldp
from pystanprivacy.privacy import mechanisms as M
from pystanprivacy.privacy import records as P
from pystanprivacy.models import bernstein2018 as B
from pystanprivacy.models import foulds2016 as F
from pystanprivacy.models import foulds2016_hmm as H
from pystanprivacy.models import jewson2023 as J
from pystanprivacy.models import kulkarni2022 as K
from pystanprivacy.models import kulkarni2022_regression as KR
from pystanprivacy.privacy.records import PrivacyAccountant, PrivacyRecord, Release

__all__ = [
    "ACC",
    "ACCEPTED",
    "CRASHED",
    "FAMILIES",
    "REJECTED",
    "SENTINEL",
    "SENTINEL_TEXTS",
    "Entry",
    "Row",
    "census",
    "classify",
    "int_data",
    "main",
    "real_data",
    "run_entry",
    "stan_trap",
    "table",
]

#: a distinctive "private" value: no message, chained exception, warning or log may contain it
SENTINEL = 12345.678901
SENTINEL_TEXTS = ("12345.6", "12345.7", "1.23457e+04", "1.234568e+04")

REJECTED = "rejected clearly"
ACCEPTED = "accepted silently"
CRASHED = "crashed unclearly"

FAMILIES = ("mechanisms", "ldp", "privacy", "models.release", "models.ops", "models.fit")

NAN, INF = math.nan, math.inf
_DETAIL_CHARS = 220


# ============================================================================ results
@dataclasses.dataclass(frozen=True)
class Row:
    """One hostile case and its outcome."""

    family: str
    entry: str
    argument: str
    label: str
    outcome: str
    detail: str


# ============================================================================ Stan trap
class _WouldRunStan(BaseException):
    """Raised by the trapped Stan layer. A BaseException, so that no ``except Exception`` in
    the package can swallow it."""


class _TrapStanModel:
    """What ``StanModel.get`` returns during the census: nothing compiled, nothing run."""

    def __init__(self, name: str) -> None:
        self.name = name

    def sample(self, *args: Any, **kwargs: Any) -> Any:
        raise _WouldRunStan(f"model {self.name!r} would have been sampled")

    fixed_param = sample

    def __repr__(self) -> str:
        return f"_TrapStanModel({self.name!r})"


@contextlib.contextmanager
def stan_trap():
    """Replace the Stan layer so that nothing can compile or sample: ``StanModel.get`` gives a
    :class:`_TrapStanModel`; ``StanModel.__init__``, ``sample``, ``fixed_param``, ``_run`` and
    ``stanc`` raise :class:`_WouldRunStan`. Restored on exit."""
    from pystanprivacy.sampling import stan

    def trap(*args: Any, **kwargs: Any) -> Any:
        raise _WouldRunStan("the Stan layer would have run")

    def get(cls: Any, name: str, *args: Any, **kwargs: Any) -> _TrapStanModel:
        return _TrapStanModel(name)

    cls = stan.StanModel
    saved = {name: cls.__dict__[name] for name in ("get", "__init__", "sample", "fixed_param", "_run")}
    saved_stanc = stan._stanc
    cls.get = classmethod(get)
    for name in ("__init__", "sample", "fixed_param", "_run"):
        setattr(cls, name, trap)
    stan._stanc = trap
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(cls, name, value)
        stan._stanc = saved_stanc


# ============================================================================ classifier
class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.texts.append(record.getMessage())
        except Exception:  # noqa: BLE001 - a broken record is not the census's business
            self.texts.append(str(record.msg))
        if record.exc_info:
            self.texts.append("".join(traceback.format_exception(*record.exc_info)))


def _has_sentinel(text: str) -> bool:
    return any(s in text for s in SENTINEL_TEXTS)


def _names(text: str, names: Sequence[str]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", text) for n in names)


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS - 3] + "..."


def _state(accountant: PrivacyAccountant | None) -> Any:
    return None if accountant is None else (accountant.spent, accountant.ledger)


def classify(call: Callable[[], Any], names: Sequence[str], *,
             accountant: PrivacyAccountant | None = None) -> tuple[str, str]:
    """Run ``call()`` once and classify it as :data:`REJECTED`, :data:`ACCEPTED` or
    :data:`CRASHED` (see the module docstring); returns ``(outcome, detail)``.

    ``names``: the argument's name and documented aliases (matched as whole words);
    ``accountant``: the accountant handed to the call (it must not be charged on failure).
    Use inside :func:`stan_trap` when the call could reach Stan."""
    before = _state(accountant)
    capture = _Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    exc: BaseException | None = None
    reached_stan = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call()
            except _WouldRunStan:
                reached_stan = True
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - every failure is classified
                exc = e
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)

    problems: list[str] = []
    if _state(accountant) != before:
        problems.append("charged the accountant")
    noisy = [w for w in caught if not issubclass(w.category, P.ReproducibleNotSecureWarning)]
    if noisy:
        w = noisy[0]
        problems.append(f"warned ({w.category.__name__}: {str(w.message)[:80]})")
    if any(_has_sentinel(str(w.message)) for w in caught):
        problems.append("a warning quotes the private sentinel")
    if any(_has_sentinel(t) for t in capture.texts):
        problems.append("a log record quotes the private sentinel")

    if reached_stan:
        return CRASHED, "; ".join(["reached Stan (validation must come first)"] + problems)
    if exc is None:
        return ACCEPTED, "; ".join(["returned normally"] + problems)
    if not isinstance(exc, (TypeError, ValueError)):
        problems.insert(0, f"{type(exc).__name__} is not a TypeError/ValueError")
    if not _names(str(exc), names):
        problems.append(f"message does not name {'/'.join(names)}")
    if _has_sentinel("".join(traceback.format_exception(exc))):
        problems.append("message or chained exception quotes the private sentinel")
    if problems:
        return CRASHED, "; ".join(problems) + " | " + _short(exc)
    return REJECTED, _short(exc)


# ============================================================================ case tables
class _Opaque:
    """An object of no relevant type."""

    def __repr__(self) -> str:
        return "<opaque>"


class _FakeAccountant:
    """Duck-types PrivacyAccountant (spend/check) without being one."""

    def __init__(self) -> None:
        self.calls = 0

    def spend(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1

    def check(self, *args: Any, **kwargs: Any) -> bool:
        return True


class _Lazy:
    """A hostile value built at call time (its construction is part of the call)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class _With:
    """A hostile value that needs other arguments changed too (still one defect)."""

    def __init__(self, value: Any, **others: Any) -> None:
        self.value, self.others = value, others


_DROP = object()       # d_with(key=_DROP): the key is left out
ACC = object()        # placeholder: the case's (watched) PrivacyAccountant
_EXHAUSTED = object()  # hostile value: an accountant whose budget cannot cover the call

BIG_BUDGET = (1e6, 0.5)
TINY_BUDGET = (1e-6, 0.0)

TYPES = [("str", "1.0"), ("bytes", b"1"), ("None", None), ("bool", True), ("complex", 1 + 0j),
         ("object", _Opaque()), ("list", [1.0]), ("1-element array", np.array([1.0]))]


def _types(optional: bool = False) -> list[tuple[str, Any]]:
    return [t for t in TYPES if not (optional and t[1] is None)]


def positive(optional: bool = False) -> list[tuple[str, Any]]:
    """Never a valid epsilon / sensitivity / scale / radius / total / bound."""
    return [("NaN", NAN), ("+inf", INF), ("-inf", -INF), ("0", 0.0), ("-0.0", -0.0), ("negative", -1.0),
            ("-1e308", -1e308), ("negative tiny (-5e-324)", -5e-324)] + _types(optional)


def delta_values(positive_only: bool = False) -> list[tuple[str, Any]]:
    out = [("NaN", NAN), ("+inf", INF), ("-inf", -INF), ("negative", -0.1), ("negative tiny (-5e-324)", -5e-324),
           ("1", 1.0), ("1.5", 1.5), ("huge (1e308)", 1e308)] + _types()
    return out + ([("0", 0.0)] if positive_only else [])


def open_unit() -> list[tuple[str, Any]]:
    """Never in (0, 1)."""
    return [("NaN", NAN), ("+inf", INF), ("-inf", -INF), ("0", 0.0), ("1", 1.0), ("negative", -0.5),
            ("1.5", 1.5), ("huge (1e308)", 1e308)] + _types()


def ints(minimum: int, optional: bool = False) -> list[tuple[str, Any]]:
    out = [(f"{minimum - 1} (< {minimum})", minimum - 1), ("non-integer float", minimum + 0.5), ("NaN", NAN),
           ("+inf", INF), ("str", str(minimum + 1)), ("bool", True), ("complex", 2j), ("list", [minimum + 1])]
    if minimum - 1 != -1:
        out.insert(1, ("-1", -1))
    return out + ([] if optional else [("None", None)])


SEEDS = [("negative", -1), ("float", 1.5), ("NaN", NAN), ("str", "0"), ("bool", True), ("object", _Opaque()),
         ("RandomState", np.random.RandomState(0)), ("list", [0])]
LABELS = [("int", 1), ("bytes", b"x"), ("bool", True), ("object", _Opaque()), ("list", ["a"])]
NEIGHBOURING = [("unknown str", "bogus"), ("empty str", ""), ("wrong case", "Replace-One"), ("None", None),
                ("int", 1), ("bytes", b"replace-one")]
ACCOUNTANTS = [("budget too small", _EXHAUSTED), ("float", 1.0), ("str", "accountant"), ("dict", {"epsilon": 1.0}),
               ("duck-typed object", _FakeAccountant()), ("the class itself", PrivacyAccountant)]
BOUNDS = [("reversed", (1.0, 0.0)), ("equal", (0.5, 0.5)), ("NaN", (NAN, 1.0)), ("+inf", (0.0, INF)),
          ("-inf", (-INF, 0.0)), ("str", "ab"), ("one element", (0.0,)), ("three elements", (0.0, 0.5, 1.0)),
          ("str element", ("0", 1.0)), ("None element", (None, 1.0)), ("complex element", (0j, 1.0)),
          ("scalar", 1.0), ("dict", {"lower": 0.0}), ("set", {0.0, 1.0})]
DETAILS = [("str", "details"), ("list", [1]), ("NaN inside", {"a": NAN}), ("inf inside", {"a": INF}),
           ("object inside", {"a": _Opaque()}), ("non-str key", {1: "a"}), ("array inside", {"a": np.array([1.0])})]
BUDGET_SPLITS = [("str", "half"), ("list", [0.5]), ("NaN inside", {"c": NAN}), ("object inside", {"c": _Opaque()})]
THRESHOLDS = [("str", "strict"), ("dict", {"max_rhat": 1.1}), ("int", 1)]
FLAGS = [("str", "yes"), ("int", 1), ("None", None)]
ADAPT_DELTA = [("0", 0.0), ("1", 1.0), ("NaN", NAN), ("negative", -0.5), ("1.5", 1.5), ("str", "0.8"),
               ("None", None), ("bool", True)]


def _nonnumeric(g: np.ndarray) -> list[tuple[str, Any]]:
    return [("str array", g.astype(str)), ("bytes array", g.astype(bytes)), ("object array", g.astype(object)),
            ("complex array", g.astype(complex)), ("None", None), ("str", "1.0"), ("dict", {"x": 1.0}),
            ("ragged", [[SENTINEL], [1.0, 2.0]]), ("list of objects", [_Opaque(), _Opaque()])]


def _axes(g: np.ndarray, ndim: Sequence[int] | None) -> list[tuple[str, Any]]:
    if ndim is None:
        return []
    out = [("extra axes", g.reshape((1,) * (max(ndim) + 1 - g.ndim) + g.shape))]
    if min(ndim) > 0 and g.ndim > min(ndim) - 1:
        fewer = g.reshape(-1)[0] if min(ndim) == 1 else g.reshape(-1)
        out.append(("too few axes", fewer))
    return out


def _empties(g: np.ndarray, ndim: Sequence[int] | None = None) -> list[tuple[str, Any]]:
    out = [("empty", np.zeros((0,) + g.shape[1:]))]
    if g.ndim >= 2:
        out.append(("empty last axis", np.zeros(g.shape[:-1] + (0,))))
    elif ndim is not None and g.ndim + 1 in ndim:  # (N,) also accepted as (R, N): R = 0 data sets
        out.append(("zero data sets (0, N)", np.zeros((0,) + g.shape)))
    return out


def _put(g: np.ndarray, value: float, index: int = 0) -> np.ndarray:
    a = np.array(g, dtype=float, copy=True)
    a.flat[index] = value
    return a


def real_data(good: Any, *, ndim: Sequence[int] | None = None, empty: bool = True,
              bool_invalid: bool = False, nonnegative: bool = False) -> list[tuple[str, Any]]:
    """Hostile variants of real-valued private data ``good``: NaN/±inf, non-numeric, wrong
    shape, empty. The NaN/±inf and non-numeric variants hold the sentinel (at index 1 unless
    ``good`` already holds it elsewhere than at index 0)."""
    g = np.asarray(good, dtype=float)
    s = g
    if g.size >= 2 and not np.any(g == SENTINEL):  # the defect must be refused whatever the sentinel is
        s = _put(g, SENTINEL, 1)
    out = [("NaN", _put(s, NAN)), ("+inf", _put(s, INF)), ("-inf", _put(s, -INF))] + _nonnumeric(s)
    out += _axes(g, ndim) + (_empties(g, ndim) if empty else [])
    if bool_invalid:
        out.append(("bool array", g > 0))
    if nonnegative:
        out.append(("negative value", _put(g, -1.0)))
    return out


def int_data(good: Any, *, lo: int, hi: int | None, ndim: Sequence[int] | None = None,
             empty: bool = True) -> list[tuple[str, Any]]:
    """Hostile variants of integer private data in [lo, hi] (hi None: unbounded)."""
    g = np.asarray(good, dtype=float)
    out = [("NaN", _put(g, NAN)), ("+inf", _put(g, INF)), ("-inf", _put(g, -INF)),
           ("non-integer", _put(g, lo + 0.5)), (f"below {lo}", _put(g, lo - 1)),
           ("sentinel (non-integer)", _put(g, SENTINEL))] + _nonnumeric(g)
    if hi is not None:
        out += [(f"above {hi}", _put(g, hi + 1)), ("huge (1e308)", _put(g, 1e308))]
    return out + _axes(g, ndim) + (_empties(g, ndim) if empty else [])


@dataclasses.dataclass
class Entry:
    """One public entry point. ``call(accountant, kwargs)`` calls it with the keyword
    arguments ``base`` (all valid; :data:`ACC` stands for the case's watched accountant), where
    one argument at a time is replaced by each ``(label, value)`` of ``hostile[argument]``;
    ``names[argument]`` lists the names a clear message may use (default: the argument)."""

    family: str
    name: str
    call: Callable[[PrivacyAccountant, dict[str, Any]], Any]
    base: dict[str, Any]
    hostile: dict[str, list[tuple[str, Any]]]
    names: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    expect: str = "returns"  # what the valid call does: "returns" or "stan" (reaches the trap)


def _fresh(value: Any, acc: PrivacyAccountant) -> Any:
    if value is ACC or value is _EXHAUSTED:
        return acc
    if isinstance(value, _Lazy):
        return value.make()
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, dict)):
        return copy.deepcopy(value)
    return value


def run_entry(entry: Entry) -> list[Row]:
    """The valid call (a crashed ``(valid call)`` row if it misbehaves), then one
    :func:`classify` per hostile value; use inside :func:`stan_trap`."""
    rows: list[Row] = []
    # the valid call: the census is only meaningful when it does what it should
    acc = PrivacyAccountant(*BIG_BUDGET)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry.call(acc, {k: _fresh(v, acc) for k, v in entry.base.items()})
        got = "returns"
    except _WouldRunStan:
        got = "stan"
    except Exception as exc:  # noqa: BLE001
        got = _short(exc)
    if got != entry.expect:
        rows.append(Row(entry.family, entry.name, "(valid call)", "baseline", CRASHED,
                        f"the valid call should {'reach Stan' if entry.expect == 'stan' else 'return'}, got: {got}"))
    for arg, values in entry.hostile.items():
        names = entry.names.get(arg, (arg,))
        for label, value in values:
            others: dict[str, Any] = {}
            if isinstance(value, _With):
                value, others = value.value, value.others
            acc = PrivacyAccountant(*(TINY_BUDGET if value is _EXHAUSTED else BIG_BUDGET))
            kwargs = {k: _fresh(v, acc) for k, v in {**entry.base, **others}.items()}
            fn = entry.call

            def call(fn=fn, kwargs=kwargs, arg=arg, value=value, acc=acc) -> Any:
                return fn(acc, {**kwargs, arg: _fresh(value, acc)})

            names_here = names + (("budget",) if value is _EXHAUSTED else ())
            outcome, detail = classify(call, names_here, accountant=acc)
            rows.append(Row(entry.family, entry.name, arg, label, outcome, detail))
    return rows


# ---------------------------------------------------------------------------- mechanisms
def _mechanism_entries() -> list[Entry]:
    out: list[Entry] = []
    real = np.array([0.5, SENTINEL, -2.0])
    mechs = [
        ("Laplace", M.Laplace, {"epsilon": 1.0, "sensitivity": 1.0}, real, None),
        ("Gaussian", M.Gaussian, {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0}, real, None),
        ("AnalyticGaussian", M.AnalyticGaussian, {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0}, real, None),
        ("RandomizedResponse", M.RandomizedResponse, {"epsilon": 1.0}, np.array([0, 1, 1]), (0, 1)),
        ("OptimalUnaryEncoding", M.OptimalUnaryEncoding, {"epsilon": 1.0, "d": 3}, np.array([0, 2, 1]), (0, 2)),
    ]
    for name, cls, params, good, domain in mechs:
        ctor: dict[str, list[tuple[str, Any]]] = {"epsilon": positive()}
        if name == "Gaussian":
            ctor["epsilon"] = ctor["epsilon"] + [("1 (>= 1)", 1.0), ("5 (>= 1)", 5.0)]
        if "delta" in params:
            ctor["delta"] = delta_values(positive_only=True)
        if "sensitivity" in params:
            ctor["sensitivity"] = positive()
        if "d" in params:
            ctor["d"] = ints(2)
        ctor["seed"] = SEEDS
        out.append(Entry("mechanisms", f"mechanisms.{name}(...)", lambda acc, kw, cls=cls: cls(**kw),
                          dict(params), ctor))
        if domain is None:
            value = real_data(good, bool_invalid=True)
            value_no_empty = real_data(good, bool_invalid=True, empty=False)
        else:
            value = int_data(good, lo=domain[0], hi=domain[1])
            value_no_empty = int_data(good, lo=domain[0], hi=domain[1], empty=False)
        mech = cls(**params)
        release = {"value": value, "accountant": ACCOUNTANTS, "n": ints(1, optional=True),
                   "bounds": BOUNDS, "neighbouring": NEIGHBOURING, "label": LABELS,
                   "changed": ints(1, optional=True)}
        out.append(Entry("mechanisms", f"mechanisms.{name}.release",
                          lambda acc, kw, mech=mech: mech.release(**kw),
                          {"value": good, "accountant": ACC}, release))
        out.append(Entry("mechanisms", f"mechanisms.{name}.randomise",
                          lambda acc, kw, mech=mech: mech.randomise(**kw),
                          {"value": good}, {"value": value_no_empty, "changed": ints(1, optional=True)}))
    lower_upper = [("NaN", NAN), ("+inf", INF), ("-inf", -INF)] + _types()
    out.append(Entry("mechanisms", "mechanisms.Clip(...)", lambda acc, kw: M.Clip(**kw), {"lower": 0.0, "upper": 1.0},
                      {"lower": lower_upper + [("above upper", 2.0), ("equal to upper", 1.0)],
                       "upper": lower_upper + [("below lower", -1.0)]},
                      names={"lower": ("lower",), "upper": ("upper",)}))
    out.append(Entry("mechanisms", "mechanisms.Clip.__call__", lambda acc, kw: M.Clip(0.0, 1.0)(**kw),
                      {"x": real}, {"x": real_data(real, empty=False, bool_invalid=True)}))
    out.append(Entry("mechanisms", "mechanisms.ClipL2(...)", lambda acc, kw: M.ClipL2(**kw), {"radius": 1.0},
                      {"radius": positive()}))
    rows = np.array([[0.5, SENTINEL], [-2.0, 0.1]])
    out.append(Entry("mechanisms", "mechanisms.ClipL2.__call__", lambda acc, kw: M.ClipL2(1.0)(**kw),
                      {"x": rows}, {"x": real_data(rows, ndim=(1, 2), empty=False, bool_invalid=True)}))
    out.append(Entry("mechanisms", "mechanisms.project_nonnegative", lambda acc, kw: M.project_nonnegative(**kw),
                      {"x": real}, {"x": real_data(real, empty=False, bool_invalid=True)}))
    out.append(Entry("mechanisms", "mechanisms.project_simplex", lambda acc, kw: M.project_simplex(**kw),
                      {"x": rows, "total": 1.0},
                      {"x": real_data(rows, ndim=(1, 2), empty=False, bool_invalid=True)
                       + [("no columns", np.zeros((2, 0))), ("empty 1-d", np.zeros(0))],
                       "total": positive()}))
    return out


# ---------------------------------------------------------------------------- ldp
def _ldp_entries() -> list[Entry]:
    common = {"accountant": ACCOUNTANTS, "seed": SEEDS, "label": LABELS, "details": DETAILS}
    x = np.array([0.2, SENTINEL, -3.0])
    vals = np.array([[0.2, 0.1], [SENTINEL, 0.4], [-1.0, 0.0]])
    out = [
        Entry("ldp", "ldp.clipped_laplace_reports", lambda acc, kw: ldp.clipped_laplace_reports(**kw),
               {"x": x, "epsilon": 1.0, "bounds": (0.0, 1.0), "accountant": ACC},
               {"x": real_data(x, ndim=(1, 2), bool_invalid=True), "epsilon": positive(),
                "bounds": [b for b in BOUNDS], **common, "budget_split": BUDGET_SPLITS}),
        Entry("ldp", "ldp.gaussian_reports", lambda acc, kw: ldp.gaussian_reports(**kw),
               {"values": vals, "epsilon": 1.0, "delta": 1e-5, "sensitivity": 2.0, "accountant": ACC},
               {"values": real_data(vals, ndim=(1, 2), bool_invalid=True), "epsilon": positive(),
                "delta": delta_values(positive_only=True), "sensitivity": positive(),
                "scale_ratios": [("wrong length", [1.0]), ("2-d", [[1.0, 1.0]]), ("zero", [0.0, 1.0]),
                                 ("negative", [-1.0, 1.0]), ("NaN", [NAN, 1.0]), ("+inf", [INF, 1.0]),
                                 ("str", "1,1"), ("str array", np.array(["1", "1"])), ("complex", [1j, 1.0])],
                "max_norm": positive(optional=True) + [("above sensitivity / 2", 5.0)],
                **common, "budget_split": BUDGET_SPLITS},
               names={"max_norm": ("max_norm",)}),
        Entry("ldp", "ldp.randomized_response_reports", lambda acc, kw: ldp.randomized_response_reports(**kw),
               {"bits": np.array([0, 1, 1]), "epsilon": 1.0, "accountant": ACC},
               {"bits": int_data([0, 1, 1], lo=0, hi=1, ndim=(1,)), "epsilon": positive(), **common,
                "budget_split": BUDGET_SPLITS}),
        Entry("ldp", "ldp.oue_reports", lambda acc, kw: ldp.oue_reports(**kw),
               {"x": np.array([0, 2, 1]), "epsilon": 1.0, "d": 3, "accountant": ACC},
               {"x": int_data([0, 2, 1], lo=0, hi=2, ndim=(1, 2)), "epsilon": positive(), "d": ints(2), **common}),
        Entry("ldp", "ldp.aggregate_reports", lambda acc, kw: ldp.aggregate_reports(**kw),
               {"reports": np.array([[0, 1], [1, 0], [0, 1]])},
               {"reports": int_data([[0, 1], [1, 0], [0, 1]], lo=0, hi=1, ndim=(2,))}),
        Entry("ldp", "ldp.split_budget", lambda acc, kw: ldp.split_budget(**kw), {"epsilon": 1.0, "c": 0.5},
               {"epsilon": positive(), "c": open_unit()}),
        Entry("ldp", "ldp.budget_split_details", lambda acc, kw: ldp.budget_split_details(**kw),
               {"epsilon": 1.0, "c": 0.5}, {"epsilon": positive(), "c": open_unit()}),
        Entry("ldp", "ldp.oue_probabilities", lambda acc, kw: ldp.oue_probabilities(**kw), {"epsilon": 1.0},
               {"epsilon": positive()}),
    ]
    return out


# ---------------------------------------------------------------------------- privacy
def _privacy_entries() -> list[Entry]:
    rec = PrivacyRecord(mechanism="laplace", epsilon=1.0, sensitivity=1.0, sensitivity_norm="l1", scale=1.0,
                        bounds=(0.0, 1.0), n=3)
    rec_dict = rec.to_dict()
    good_values = np.array([0.5, 1.5])

    def d_with(**changes: Any) -> dict[str, Any]:
        d = {"values": [0.5, 1.5], "shape": [2], "record": copy.deepcopy(rec_dict)}
        for k, v in changes.items():
            if v is _DROP:
                d.pop(k)
            else:
                d[k] = v
        return d

    def rec_with(**changes: Any) -> dict[str, Any]:
        r = copy.deepcopy(rec_dict)
        r.update(changes)
        return r

    release_values = [("NaN", np.array([0.5, NAN])), ("+inf", np.array([INF, 0.5])), ("-inf", np.array([-INF, 0.5])),
                      ("str array", np.array(["0.5", "1.5"])), ("bytes array", np.array([b"0.5"])),
                      ("object array", np.array([0.5, 1.5], dtype=object)), ("complex array", np.array([1j, 0.5])),
                      ("None", None), ("str", "0.5"), ("dict", {"x": 0.5}), ("ragged", [[0.5], [1.0, 2.0]]),
                      ("list of objects", [_Opaque()]), ("empty", np.zeros(0)), ("empty 2-d", np.zeros((2, 0)))]
    return [
        Entry("privacy", "privacy.PrivacyAccountant(...)", lambda acc, kw: PrivacyAccountant(**kw),
               {"epsilon": 1.0, "delta": 0.0}, {"epsilon": positive(), "delta": delta_values()}),
        Entry("privacy", "privacy.PrivacyAccountant.spend", lambda acc, kw: acc.spend(**kw),
               {"epsilon": 1.0, "delta": 0.0},
               {"epsilon": positive() + [("exceeds the budget", 2e6)],
                "delta": delta_values() + [("exceeds the budget", 0.9)], "label": LABELS}),
        Entry("privacy", "privacy.PrivacyAccountant.check", lambda acc, kw: acc.check(**kw),
               {"epsilon": 1.0, "delta": 0.0}, {"epsilon": positive(), "delta": delta_values()}),
        Entry("privacy", "privacy.PrivacyRecord(...)", lambda acc, kw: PrivacyRecord(**kw),
               {"mechanism": "laplace", "epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0, "sensitivity_norm": "l1",
                    "scale": 1.0, "bounds": (0.0, 1.0), "n": 3, "neighbouring": "replace-one", "details": {}},
               {"mechanism": [("empty str", ""), ("None", None), ("int", 1), ("bytes", b"laplace")],
                "epsilon": positive(), "delta": delta_values(), "sensitivity": positive(optional=True),
                "sensitivity_norm": [("unknown", "l3"), ("int", 1), ("bytes", b"l1")],
                "scale": positive(optional=True), "bounds": BOUNDS, "n": ints(1, optional=True),
                "neighbouring": NEIGHBOURING, "details": DETAILS}),
        Entry("privacy", "privacy.Release(...)", lambda acc, kw: Release(**kw), {"values": good_values, "record": rec},
               {"values": release_values,
                "record": [("dict", rec_dict), ("None", None), ("str", "laplace"), ("Release", _Lazy(
                    lambda: Release(values=good_values, record=rec)))]}),
        Entry("privacy", "privacy.Release.from_dict", lambda acc, kw: Release.from_dict(_pick_d(kw)), {"d": d_with()},
               {"d": [("None", None), ("list", [[0.5], rec_dict]), ("str", "release"), ("Release", _Lazy(
                   lambda: Release(values=good_values, record=rec))),
                      ("missing 'record'", d_with(record=_DROP)), ("missing 'values'", d_with(values=_DROP)),
                      ("unknown key", d_with(extra=1))],
                "d['values']": [("NaN", d_with(values=[0.5, NAN])), ("+inf", d_with(values=[INF, 0.5])),
                                ("str", d_with(values=["0.5", "1.5"])),
                                ("ragged", d_with(values=[[0.5], [1.0, 2.0]], shape=_DROP)),
                                ("None", d_with(values=None, shape=_DROP)),
                                ("dict", d_with(values={"a": 1}, shape=_DROP)),
                                ("empty", d_with(values=[], shape=[0]))],
                "d['shape']": [("does not match", d_with(shape=[3])), ("str", d_with(shape="2")),
                               ("negative", d_with(shape=[-1, -2])), ("floats", d_with(shape=[2.0])),
                               ("bools", d_with(shape=[True, True])), ("None", d_with(shape=None))],
                "d['record']": [("None", d_with(record=None)), ("str", d_with(record="laplace")),
                                ("unknown field", d_with(record=rec_with(colour="red"))),
                                ("NaN epsilon", d_with(record=rec_with(epsilon=NAN))),
                                ("negative epsilon", d_with(record=rec_with(epsilon=-1.0))),
                                ("delta 1", d_with(record=rec_with(delta=1.0))),
                                ("bad neighbouring", d_with(record=rec_with(neighbouring="bogus"))),
                                ("reversed bounds", d_with(record=rec_with(bounds=[1.0, 0.0])))]},
               names={"d": ("d", "record", "values"), "d['values']": ("values",), "d['shape']": ("shape",),
                      "d['record']": ("record", "PrivacyRecord", "d", "epsilon", "delta", "neighbouring", "bounds")}),
    ]


def _pick_d(kw: dict[str, Any]) -> Any:
    """The ``d`` of a from_dict case: the hostile labels ``d['values']``, ``d['shape']`` and
    ``d['record']`` are whole dicts passed as ``d`` (the key other than the base ``d``)."""
    for k, v in kw.items():
        if k != "d":
            return v
    return kw["d"]


# ---------------------------------------------------------------------------- models: releases
X32 = np.array([[0.3, 0.3], [-0.2, 0.5], [0.1, -0.6]])
Y3 = np.array([0.1, 0.2, -0.3])
B3 = np.array([0, 1, 1])
HMM_COUNTS = np.ones((2, 3, 4), dtype=np.int64)  # (regions, months, feature sizes 2 + 2)


def _model_release_entries() -> list[Entry]:
    fam = "models.release"
    acc_seed = {"accountant": ACCOUNTANTS, "seed": SEEDS}
    bb, md, eg = B.BinomialBeta(), B.MultinomialDirichlet(), B.ExponentialGamma(bounds=(0.0, 5.0))
    x_exp = np.array([0.5, SENTINEL, 2.0])
    hmm_counts = int_data(HMM_COUNTS, lo=0, hi=None, ndim=(3,)) + [
        ("features disagree", _put(HMM_COUNTS, 2, 0)), ("columns do not match feature_sizes", np.ones((2, 3, 5), int))]
    feature_sizes = [("sum mismatch", [2, 3]), ("size 1", [1, 3]), ("None", None), ("str", "22"),
                     ("non-integer", [2.5, 2.5]), ("NaN entry", [NAN, 2]), ("negative", [-2, 6]), ("empty", []),
                     ("int", 4), ("object", _Opaque())]
    eps_per_feature = [("wrong length", [1.0]), ("NaN entry", [NAN, 1.0]), ("zero entry", [0.0, 1.0]),
                       ("negative entry", [-1.0, 2.0]), ("str", "1,1"), ("scalar", 1.0), ("None entry", [None, 1.0]),
                       ("given with epsilon", _With([0.5, 0.5], epsilon=1.0))]
    out = [
        Entry(fam, "foulds2016.BetaBernoulli.release", lambda acc, kw: F.BetaBernoulli.release(**kw),
               {"x": B3, "epsilon": 1.0, "accountant": ACC},
               {"x": int_data(B3, lo=0, hi=1, ndim=(1, 2)), "epsilon": positive(), **acc_seed}),
        Entry(fam, "foulds2016_hmm.NaiveBayesHMM.release", lambda acc, kw: H.NaiveBayesHMM.release(**kw),
               {"counts": HMM_COUNTS, "epsilon": 1.0, "feature_sizes": [2, 2], "accountant": ACC},
               {"counts": hmm_counts, "epsilon": positive(), "feature_sizes": feature_sizes,
                "epsilon_per_feature": [(label, v if isinstance(v, _With) else _With(v, epsilon=None))
                                        for label, v in eps_per_feature], **acc_seed},
               names={"epsilon_per_feature": ("epsilon_per_feature", "epsilon")}),
        Entry(fam, "bernstein2018.BinomialBeta.release", lambda acc, kw: bb.release(**kw),
               {"x": B3, "epsilon": 1.0, "accountant": ACC},
               {"x": int_data(B3, lo=0, hi=1, ndim=(1, 2)), "epsilon": positive(), **acc_seed}),
        Entry(fam, "bernstein2018.MultinomialDirichlet.release", lambda acc, kw: md.release(**kw),
               {"x": np.array([0, 1, 2]), "epsilon": 1.0, "accountant": ACC},
               {"x": int_data([0, 1, 2], lo=0, hi=2, ndim=(1, 2)), "epsilon": positive(), **acc_seed}),
        Entry(fam, "bernstein2018.ExponentialGamma.release", lambda acc, kw: eg.release(**kw),
               {"x": x_exp, "epsilon": 1.0, "accountant": ACC},
               {"x": real_data(x_exp, ndim=(1, 2), nonnegative=True), "epsilon": positive(), **acc_seed}),
        Entry(fam, "bernstein2018.ExponentialGamma(bounds=...)", lambda acc, kw: B.ExponentialGamma(**kw),
               {"bounds": (0.0, 5.0)}, {"bounds": BOUNDS + [("negative lower", (-1.0, 5.0))]}),
        Entry(fam, "bernstein2018.BinomialBeta.release_statistics", lambda acc, kw: bb.release_statistics(**kw),
               {"s": 2, "n": 3, "epsilon": 1.0, "accountant": ACC},
               {"s": [("NaN", NAN), ("+inf", INF), ("above n", 4), ("negative", -1), ("non-integer", 1.5),
                      ("sentinel", SENTINEL), ("str", "2"), ("None", None), ("object", _Opaque()),
                      ("complex", 2j), ("3-d", [[[2]]])],
                "n": ints(1), "epsilon": positive(), **acc_seed}),
        Entry(fam, "bernstein2018.MultinomialDirichlet.release_statistics",
               lambda acc, kw: md.release_statistics(**kw),
               {"s": np.array([1, 1, 1]), "n": 3, "epsilon": 1.0, "accountant": ACC},
               {"s": [("NaN", [NAN, 1, 1]), ("+inf", [INF, 1, 1]), ("do not sum to n", [1, 1, 2]),
                      ("negative", [-1, 2, 2]), ("non-integer", [0.5, 1.5, 1]), ("wrong length", [1, 2]),
                      ("str array", np.array(["1", "1", "1"])), ("None", None), ("3-d", [[[1, 1, 1]]]),
                      ("empty", np.zeros(0))],
                "n": ints(1), "epsilon": positive(), **acc_seed}),
        Entry(fam, "bernstein2018.ExponentialGamma.release_statistics",
               lambda acc, kw: eg.release_statistics(**kw),
               {"s": 4.5, "n": 3, "epsilon": 1.0, "accountant": ACC},
               {"s": [("NaN", NAN), ("+inf", INF), ("-inf", -INF), ("negative", -1.0),
                      ("above n*b (sentinel)", SENTINEL), ("str", "4.5"), ("None", None), ("complex", 4.5j),
                      ("3-d", [[[4.5]]]), ("wrong length", [[1.0, 2.0]])],
                "n": ints(1), "epsilon": positive(), **acc_seed}),
    ]
    for cls_name, model, y in (("BinomialBeta", bb, np.array([1.7])),
                               ("MultinomialDirichlet", md, np.array([1.2, 0.8, 1.1])),
                               ("ExponentialGamma", eg, np.array([4.2]))):
        out.append(Entry(fam, f"bernstein2018.{cls_name}.published", lambda acc, kw, model=model: model.published(**kw),
                          {"y": y, "n": 3, "epsilon": 1.0},
                          {"y": real_data(y, ndim=(0, 1, 2), bool_invalid=False)
                           + ([("wrong length", y[:2])] if y.size > 1 else [("wrong width", np.zeros((2, 2)))]),
                           "n": ints(1), "epsilon": positive()}))
    x_ldp = np.array([0.5, SENTINEL, -7.0])
    out += [
        Entry(fam, "kulkarni2022.GaussianLDP.release", lambda acc, kw: K.GaussianLDP.release(**kw),
               {"x": x_ldp, "epsilon": 1.0, "accountant": ACC},
               {"x": real_data(x_ldp, ndim=(1, 2), bool_invalid=True), "epsilon": positive(), "bounds": BOUNDS,
                **acc_seed}),
        Entry(fam, "kulkarni2022.ExponentialLDP.release", lambda acc, kw: K.ExponentialLDP.release(**kw),
               {"x": np.abs(x_ldp), "epsilon": 1.0, "accountant": ACC},
               {"x": real_data(np.abs(x_ldp), ndim=(1, 2), bool_invalid=True, nonnegative=True),
                "epsilon": positive(), "bound": positive(), **acc_seed}),
        Entry(fam, "kulkarni2022.HistogramOUE.release", lambda acc, kw: K.HistogramOUE.release(**kw),
               {"x": np.array([0, 2, 1]), "epsilon": 1.0, "d": 3, "accountant": ACC},
               {"x": int_data([0, 2, 1], lo=0, hi=2, ndim=(1, 2)), "epsilon": positive(), "d": ints(2), **acc_seed}),
    ]
    x_kr = real_data(X32, ndim=(2,), bool_invalid=False)
    y_lin = real_data(Y3, ndim=(1,), bool_invalid=False) + [("wrong length", Y3[:2])]
    y_log = int_data(B3, lo=0, hi=1, ndim=(1,)) + [("wrong length", B3[:2])]
    ratio = positive() + [("below 1e-3", 1e-4), ("above 1e3", 1e4)]
    kr = [("LinearRegressionSS", KR.LinearRegressionSS, Y3, y_lin,
           {"R_y": positive(), "ratio_xy": ratio, "ratio_yy": ratio}),
          ("LinearRegressionInputs", KR.LinearRegressionInputs, Y3, y_lin, {"R_y": positive(), "c": open_unit()}),
          ("LogisticRegressionSS", KR.LogisticRegressionSS, B3, y_log, {"ratio_t2": ratio}),
          ("LogisticRegressionInputs", KR.LogisticRegressionInputs, B3, y_log, {"c": open_unit()})]
    for name, cls, y, y_bad, extra in kr:
        out.append(Entry(fam, f"kulkarni2022_regression.{name}.release", lambda acc, kw, cls=cls: cls.release(**kw),
                          {"x": X32, "y": y, "epsilon": 1.0, "accountant": ACC},
                          {"x": x_kr, "y": y_bad, "epsilon": positive(), "delta": delta_values(positive_only=True),
                           "R": positive(), **extra, **acc_seed}))
    return out


# ---------------------------------------------------------------------------- models: OPS
def _ops_entries() -> list[Entry]:
    fam = "models.ops"
    sampler = {"chains": ints(1), "warmup": ints(0), "draws": ints(1), "max_treedepth": ints(1),
               "adapt_delta": ADAPT_DELTA, "thresholds": THRESHOLDS, "allow_unconverged": FLAGS}
    bbo = F.BetaBernoulliOPS()
    hmmo = H.NaiveBayesHMMOPS(2)
    hmm_counts = int_data(HMM_COUNTS, lo=0, hi=None, ndim=(3,)) + [("features disagree", _put(HMM_COUNTS, 2, 0))]
    out = [
        Entry(fam, "foulds2016.BetaBernoulliOPS.sample_one", lambda acc, kw: bbo.sample_one(**kw),
               {"x": B3, "epsilon": 1.0, "accountant": ACC},
               {"x": int_data(B3, lo=0, hi=1, ndim=(1,)) + [("2-d (use sample_batch)", B3[None, :])],
                "epsilon": positive(), "accountant": ACCOUNTANTS, "seed": SEEDS, **sampler}, expect="stan"),
        Entry(fam, "foulds2016.BetaBernoulliOPS.sample_batch", lambda acc, kw: bbo.sample_batch(**kw),
               {"x": B3[None, :], "epsilon": 1.0},
               {"x": int_data(B3[None, :], lo=0, hi=1, ndim=(1, 2)), "epsilon": positive(), "seed": SEEDS},
               expect="stan"),
        Entry(fam, "foulds2016.BetaBernoulliOPS(a0=...)", lambda acc, kw: F.BetaBernoulliOPS(**kw), {"a0": 0.2},
               {"a0": open_unit() + [("0.5", 0.5)]}),
        Entry(fam, "foulds2016_hmm.NaiveBayesHMMOPS.sample_one", lambda acc, kw: hmmo.sample_one(**kw),
               {"counts": HMM_COUNTS, "epsilon": 1.0, "feature_sizes": [2, 2], "accountant": ACC},
               {"counts": hmm_counts, "epsilon": positive(),
                "feature_sizes": [("sum mismatch", [2, 3]), ("size 1", [1, 3]), ("str", "22"),
                                  ("non-integer", [2.5, 2.5]),
                                  ("NaN entry", [NAN, 2]), ("None", None)],
                "heldout": [("wrong shape", np.zeros((3, 2), int)), ("NaN", _put(np.zeros((2, 3)), NAN)),
                            ("value 2", np.array([[0, 2, 0], [0, 0, 0]])), ("all held out", np.ones((2, 3), int)),
                            ("str", "all")],
                "init": [("unknown str", "bogus"), ("int", 5), ("wrong count", [{}]), ("not mappings", [1, 2, 3, 4])],
                "accountant": ACCOUNTANTS, "seed": SEEDS, **sampler}, expect="stan"),
        Entry(fam, "foulds2016_hmm.NaiveBayesHMMOPS(multiplier=...)", lambda acc, kw: H.NaiveBayesHMMOPS(2, **kw),
               {"multiplier": 100.0}, {"multiplier": positive() + [("1", 1.0), ("0.5", 0.5)]}),
        Entry(fam, "foulds2016_hmm.NaiveBayesHMMOPS(a0=...).sample_one",
               lambda acc, kw: H.NaiveBayesHMMOPS(2, a0=kw.pop("a0")).sample_one(**kw),
               {"a0": [0.1, 0.1], "counts": HMM_COUNTS, "epsilon": 1.0, "feature_sizes": [2, 2], "accountant": ACC},
               {"a0": [("NaN entry", [NAN, 0.1]), ("+inf entry", [INF, 0.1]), ("zero entry", [0.0, 0.1]),
                       ("negative entry", [-0.1, 0.1]), ("entry >= 1/K", [0.6, 0.1]), ("wrong length", [0.1]),
                       ("2-d", [[0.1, 0.1]]), ("str", "abc"), ("str entries", ["a", "b"]), ("object", _Opaque())]},
               expect="stan"),
    ]
    Xs = np.array([[0.3, SENTINEL], [-0.2, 0.5], [0.1, -0.6]])
    for name, model, y, eps in (("LogisticRegressionBetaD", J.LogisticRegressionBetaD(), B3, 5.0),
                                ("NNClassifierBetaD", J.NNClassifierBetaD(), B3, 5.0),
                                ("LinearRegressionBetaD", J.LinearRegressionBetaD(), np.array([0.1, SENTINEL, -0.3]),
                                 40.0),
                                ("NNRegressionBetaD", J.NNRegressionBetaD(), np.array([0.1, SENTINEL, -0.3]), 40.0)):
        classification = y is B3
        y_bad = (int_data(B3, lo=0, hi=1, ndim=(1,)) if classification else real_data(y, ndim=(1,))) + [
            ("wrong length", y[:2])]
        eps_bad = positive() + ([] if classification else [("below the reachable minimum", 1.0)])
        X_bad = real_data(Xs, ndim=(2,)) + [("no columns", np.zeros((3, 0)))]
        out.append(Entry(fam, f"jewson2023.{name}.sample_one", lambda acc, kw, model=model: model.sample_one(**kw),
                          {"X": Xs, "y": y, "epsilon": eps, "accountant": ACC},
                          {"X": X_bad, "y": y_bad, "epsilon": eps_bad, "accountant": ACCOUNTANTS, "seed": SEEDS,
                           **sampler, "chains": ints(2)}, expect="stan"))
        out.append(Entry(fam, f"jewson2023.{name}.try_sample_one",
                          lambda acc, kw, model=model: model.try_sample_one(**kw),
                          {"X": Xs, "y": y, "epsilon": eps},
                          {"X": X_bad, "y": y_bad, "epsilon": eps_bad, "seed": SEEDS}, expect="stan"))
    return out


# ---------------------------------------------------------------------------- models: fit
def _forge(values: Any, record: Any) -> Release:
    """A Release as ``pickle.loads`` of a tampered pickle gives it: ``__post_init__`` (which
    validates values and record) never runs."""
    rel = object.__new__(Release)
    object.__setattr__(rel, "values", values)
    object.__setattr__(rel, "record", record)
    return rel


def _fit_entries() -> list[Entry]:
    fam = "models.fit"
    foreign = ldp.randomized_response_reports(np.array([0, 1, 1]), epsilon=1.0)
    specs = [
        ("foulds2016.BetaBernoulli", F.BetaBernoulli(), lambda: F.BetaBernoulli.release(B3, epsilon=1.0), True),
        ("foulds2016_hmm.NaiveBayesHMM", H.NaiveBayesHMM(2),
         lambda: H.NaiveBayesHMM.release(HMM_COUNTS, epsilon=1.0, feature_sizes=[2, 2]), True),
        ("bernstein2018.BinomialBeta", B.BinomialBeta(), lambda: B.BinomialBeta().release(B3, epsilon=1.0), False),
        ("bernstein2018.BinomialBetaExact", B.BinomialBetaExact(), lambda: B.BinomialBeta().release(B3, epsilon=1.0),
         False),
        ("bernstein2018.MultinomialDirichlet", B.MultinomialDirichlet(),
         lambda: B.MultinomialDirichlet().release(np.array([0, 1, 2]), epsilon=1.0), True),
        ("bernstein2018.ExponentialGamma", B.ExponentialGamma(bounds=(0.0, 5.0)),
         lambda: B.ExponentialGamma(bounds=(0.0, 5.0)).release(np.array([0.5, 1.0, 2.0]), epsilon=1.0), False),
        ("kulkarni2022.GaussianLDP", K.GaussianLDP(),
         lambda: K.GaussianLDP.release(np.array([0.5, 1.0, -2.0]), epsilon=1.0), False),
        ("kulkarni2022.ExponentialLDP", K.ExponentialLDP(),
         lambda: K.ExponentialLDP.release(np.array([0.5, 1.0, 2.0]), epsilon=1.0), False),
        ("kulkarni2022.HistogramOUE", K.HistogramOUE(),
         lambda: K.HistogramOUE.release(np.array([0, 2, 1]), epsilon=1.0, d=3), True),
        ("kulkarni2022_regression.LinearRegressionSS", KR.LinearRegressionSS(),
         lambda: KR.LinearRegressionSS.release(X32, Y3, epsilon=1.0), True),
        ("kulkarni2022_regression.LinearRegressionInputs", KR.LinearRegressionInputs(),
         lambda: KR.LinearRegressionInputs.release(X32, Y3, epsilon=1.0), True),
        ("kulkarni2022_regression.LogisticRegressionSS", KR.LogisticRegressionSS(),
         lambda: KR.LogisticRegressionSS.release(X32, B3, epsilon=1.0), True),
        ("kulkarni2022_regression.LogisticRegressionInputs", KR.LogisticRegressionInputs(),
         lambda: KR.LogisticRegressionInputs.release(X32, B3, epsilon=1.0), True),
    ]
    out = []
    for name, model, make, fixed_width in specs:
        rel = make()
        v, rec = np.array(rel.values), rel.record
        other = "gaussian" if rec.mechanism == "laplace" else "laplace"
        hostile = [
            ("dict (to_dict)", rel.to_dict()), ("None", None), ("ndarray", v.copy()), ("record only", rec),
            ("another mechanism's release", foreign),
            ("record: another mechanism", _Lazy(lambda v=v, rec=rec, other=other: Release(
                values=v, record=dataclasses.replace(rec, mechanism=other)))),
            ("extra leading axes", _Lazy(lambda v=v, rec=rec: Release(values=v[None, None], record=rec))),
            ("empty values", _Lazy(lambda v=v, rec=rec: Release(values=v[:0], record=rec))),
            ("NaN values (Release constructor)",
             _Lazy(lambda v=v, rec=rec: Release(values=np.full(v.shape, NAN), record=rec))),
            ("NaN values (unpickled, no __post_init__)",
             _Lazy(lambda v=v, rec=rec: _forge(np.full(v.shape, NAN), rec))),
            ("+inf values (unpickled, no __post_init__)",
             _Lazy(lambda v=v, rec=rec: _forge(np.full(v.shape, INF), rec))),
            ("string values (unpickled, no __post_init__)", _Lazy(lambda v=v, rec=rec: _forge(v.astype(str), rec))),
        ]
        if fixed_width:
            hostile.append(("last axis one short", _Lazy(lambda v=v, rec=rec: Release(values=v[..., :-1], record=rec))))
        aliases = ("release", "values") + (("reports",) if name.startswith("kulkarni2022.") else ())
        out.append(Entry(fam, f"{name}.fit", lambda acc, kw, model=model: model.fit(**kw), {"release": rel},
                          {"release": hostile}, names={"release": aliases}, expect="stan"))
    return out


# ============================================================================ census
def _entries() -> list[Entry]:
    entries = (_mechanism_entries() + _ldp_entries() + _privacy_entries() + _model_release_entries()
               + _ops_entries() + _fit_entries())
    return entries


def census() -> list[Row]:
    """Run every hostile case (deterministic order) and return one :class:`Row` per case
    (plus a crashed ``(valid call)`` row for any entry point whose valid call misbehaves)."""
    saved_warned = getattr(P, "_SEEDED_WARNED", None)
    rows: list[Row] = []
    try:
        with stan_trap():
            for entry in _entries():
                rows.extend(run_entry(entry))
    finally:
        if saved_warned is not None:
            P._SEEDED_WARNED = saved_warned
    return rows


def summarise(rows: Sequence[Row]) -> dict[str, Counter]:
    """Per entry point: Counter of outcomes (plus ``tried``)."""
    out: dict[str, Counter] = {}
    for r in rows:
        c = out.setdefault(r.entry, Counter())
        c["tried"] += 1
        c[r.outcome] += 1
    return out


def table(rows: Sequence[Row]) -> str:
    """The Markdown table, the totals line and the list of non-clear cases."""
    per = summarise(rows)
    lines = ["| entry point | tried | rejected clearly | accepted silently | crashed unclearly |",
             "|---|---:|---:|---:|---:|"]
    for entry, c in per.items():
        lines.append(f"| `{entry}` | {c['tried']} | {c[REJECTED]} | {c[ACCEPTED]} | {c[CRASHED]} |")
    tot = Counter(r.outcome for r in rows)
    lines.append("")
    lines.append(f"**Total: {len(rows)} hostile inputs tried over {len(per)} entry points: {tot[REJECTED]} rejected "
                 f"clearly, {tot[ACCEPTED]} accepted silently (target 0), {tot[CRASHED]} crashed unclearly "
                 "(target 0).**")
    bad = [r for r in rows if r.outcome != REJECTED]
    if bad:
        lines.append("")
        lines.append(f"Cases not rejected clearly ({len(bad)}):")
        lines.append("")
        for r in bad:
            lines.append(f"- `{r.entry}` {r.argument} = {r.label}: **{r.outcome}**: {r.detail}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    argparse.ArgumentParser(
        description="Hostile-input census of pystanprivacy's public entry points (no Stan run): prints a "
                    "Markdown table, the totals and every case not rejected clearly; exit code 1 if any input "
                    "was accepted silently or crashed unclearly.").parse_args(argv)
    rows = census()
    print(table(rows))
    return 1 if any(r.outcome != REJECTED for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
