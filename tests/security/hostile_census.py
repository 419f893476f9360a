#!/usr/bin/env python
"""Hostile-input census (issue 17, "close the side channels"; grown for issue 53, "the last
side channels and unclear failures").

Every public entry point of :mod:`pystanprivacy` that takes private data or privacy
parameters is called with a fixed, deterministic list of inputs, one argument at a time
(every other argument valid), of three kinds:

* **hostile** -- inputs its documentation declares invalid (NaN, ±inf, wrong types and
  shapes, empty data, out-of-range parameters, corrupted files, bad paths);
* **valid extremes** (label ``... (valid)``) -- documented-valid public parameters at the
  edges of float64: ε, δ, sensitivity, radius, ``max_norm``, ``R``, ``R_y``, bounds, scale
  ratios, budget splits at 5e-324, 1e-310, 1e300 and the largest float 1.797e308 (1.8e308
  itself parses to +inf, which is hostile), and data values whose noise is negligible (a count
  of 3e5 among 10^4 counts of 2^18 at ε = 1e300: it must come back, not be clamped silently);
* **neighbouring pairs** (label ``pair ...``) -- two Python-int lists that differ in one
  record, at the int64 / uint64 edges (``[.., 2**64]`` vs ``[.., 2**64 - 1]``, ``2**63 - 1``
  vs ``2**63``, ``-2**63`` vs ``-2**63 - 1``, beyond float64, an int vs a float element),
  where NumPy's inferred dtype changes with one value; in a bounded domain (bits, categories,
  nonnegative values) only pairs whose two records are both inside or both outside it.

Each case is classified:

* **rejected clearly** -- a ``TypeError`` or ``ValueError`` (or a documented subclass such
  as ``BudgetExceededError`` or ``PosteriorFileError``) whose message names the argument (or
  a documented alias, or the path it was given, as a whole word), with no private sentinel
  value in the message or in the exception chain as a traceback prints it, no warning (e.g. a
  numpy ``RuntimeWarning`` from a silent NaN), no log record quoting the sentinel, and no
  charge to the ``PrivacyAccountant`` passed in. For a valid extreme a clear refusal is
  allowed (not required); for a pair, both members refused alike;
* **handled soundly** -- a valid extreme answered with a finite result (finite values and a
  finite record; no numpy ``RuntimeWarning``; nothing clamped without a word), or, for an
  OPS entry point, reaching Stan with data that pass its checks; a pair whose two members
  give the same outcome, the same public record and the same charge;
* **accepted silently** -- a hostile input that returned normally, or a valid extreme that
  returned a wrong result (non-finite, clamped) without an error;
* **charged then failed** -- the accountant's spent budget changed and then an exception was
  raised (whatever the exception): a failed release must cost nothing;
* **crashed unclearly** -- anything else: another exception type, a message that does not
  name the argument, the sentinel in a message / chained exception / warning / log record,
  reaching Stan (a hostile input; a release entry point), starting the work of a command,
  or hanging (a call blocked on a FIFO is released after 10 s by a watchdog process that
  opens the FIFO for writing, and counts as crashed);
* **told apart** -- a neighbouring pair whose members differ in outcome, public record or
  charge: one record of private data decided what the world sees (issue 53, item 1). A
  separate class rather than "accepted silently", because neither member need be wrong alone.

Stan is never run: while the census runs ``StanModel.get`` hands out a trap whose
``sample``/``fixed_param`` run the real settings checks and the real data check
(``stan._check_data``: presence, dtype, finiteness; it reads the model's inputs with
``stanc --info``, which compiles nothing) and then raise :class:`_WouldRunStan`;
``StanModel.__init__``, ``_run`` and any other ``stanc`` call raise it too. So an OPS attempt
charged and then refused by the data check (a temperature of inf) is charged-then-failed, as
it would be for real. The command line (``pystanprivacy reproduce`` / ``audit``, run
in-process through ``cli.main`` with stdout/stderr captured) runs under :func:`work_trap`: the
runner's ``make_executor`` / ``run_tasks`` / ``write_results`` and ``run_audits`` raise
:class:`_WouldDoWork`, so a bad path must be refused -- exit code 2, one message naming the
option, no traceback -- before any of them starts.

Before the cases of an entry point, one valid call checks that the census itself is sound (it
must return, reach the Stan trap for ``fit``/OPS entry points, or reach the work trap for the
command line); a failed valid call is listed as a crashed row ``(valid call)``.

Private data hold the sentinel ``12345.678901`` wherever the domain allows it (e.g. values
that are clipped), so that a message quoting data is caught. Released values (what ``fit``
takes) are public and hold no sentinel.

Run ``python tests/security/hostile_census.py``: prints a Markdown table (one row per entry point),
a totals line and every case that failed; exits 1 when any case was accepted silently,
crashed unclearly, charged then failed or told apart.

Inputs left out because the documentation declares them **valid** (extreme but accepted,
clipped or clamped), so they are not hostile:

* finite data of any magnitude for the additive mechanisms, ``Clip``, ``ClipL2``,
  ``project_*``, ``clipped_laplace_reports``, ``gaussian_reports``, ``GaussianLDP`` /
  ``ExponentialLDP`` (clamped to the representable range or clipped to the declared bounds /
  norm: "no finite value is refused"), including 1e308, 5e-324 and the sentinel; likewise
  rows of ``x`` above ``R`` and ``|y|`` above ``R_y`` in the kulkarni2022_regression releases
  (documented as clipped, never refused), and any finite ``X`` / regression ``y`` of jewson2023;
* ``huge`` and ``tiny`` positive epsilon, sensitivity, scale, radius, total, max_norm, R,
  R_y, bound(s), multiplier, scale_ratios, c and delta as hostile inputs: they are valid
  extremes (see above), tried as such;
* a war-logs CSV cut in half for ``reproduce --data`` (a smaller data set whose last row has
  empty cells, not an invalid file);
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
from pathlib import Path
from typing import Any

import numpy as np

from pystanprivacy.models import bernstein2018 as B
from pystanprivacy.models import foulds2016 as F
from pystanprivacy.models import foulds2016_hmm as H
from pystanprivacy.models import jewson2023 as J
from pystanprivacy.models import kulkarni2022 as K
from pystanprivacy.models import kulkarni2022_regression as KR
from pystanprivacy.privacy import ldp
from pystanprivacy.privacy import mechanisms as M
from pystanprivacy.privacy import records as P
from pystanprivacy.privacy.records import PrivacyAccountant, PrivacyRecord, Release

__all__ = [
    "ACC",
    "ACCEPTED",
    "CHARGED",
    "CRASHED",
    "FAILURES",
    "FAMILIES",
    "OUTCOMES",
    "REJECTED",
    "SENTINEL",
    "SENTINEL_TEXTS",
    "SOUND",
    "TOLD_APART",
    "Entry",
    "Row",
    "census",
    "classify",
    "classify_valid",
    "extremes",
    "int_data",
    "int_pairs",
    "main",
    "real_data",
    "run_entry",
    "stan_trap",
    "table",
    "totals",
    "work_trap",
]

#: a distinctive "private" value: no message, chained exception, warning or log may contain it
SENTINEL = 12345.678901
SENTINEL_TEXTS = ("12345.6", "12345.7", "1.23457e+04", "1.234568e+04")

REJECTED = "rejected clearly"
SOUND = "handled soundly"
ACCEPTED = "accepted silently"
CRASHED = "crashed unclearly"
CHARGED = "charged then failed"
TOLD_APART = "told apart"
#: every outcome, in the table's column order
OUTCOMES = (REJECTED, SOUND, ACCEPTED, CRASHED, CHARGED, TOLD_APART)
#: the outcomes that are failures (the census must count 0 of each)
FAILURES = (ACCEPTED, CRASHED, CHARGED, TOLD_APART)

FAMILIES = ("mechanisms", "ldp", "privacy", "models.release", "models.ops", "models.fit", "files", "cli")

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
    """What ``StanModel.get`` returns during the census: nothing compiled, nothing run.

    ``sample`` and ``fixed_param`` run the real ``StanModel`` methods (their settings checks),
    and ``_run`` the real data check ``stan._check_data`` (presence, dtype and finiteness of
    every input; pure Python on the model's JSON metadata): a call the library would refuse
    there -- e.g. an OPS temperature that is not finite, after the attempt was charged --
    raises here exactly as it would. Only data that pass are trapped."""

    def __init__(self, name: str, sample: Callable[..., Any], fixed_param: Callable[..., Any]) -> None:
        self.name = name
        self._sample, self._fixed_param = sample, fixed_param

    def sample(self, *args: Any, **kwargs: Any) -> Any:
        return self._sample(self, *args, **kwargs)

    def fixed_param(self, *args: Any, **kwargs: Any) -> Any:
        return self._fixed_param(self, *args, **kwargs)

    def _run(self, data: Any, settings: Any, *, public_data: bool = False) -> Any:
        from pystanprivacy.sampling import stan

        stan._check_data(self.name, data)
        raise _WouldRunStan(f"model {self.name!r} would have been sampled")

    def __repr__(self) -> str:
        return f"_TrapStanModel({self.name!r})"


@contextlib.contextmanager
def stan_trap():
    """Replace the Stan layer so that nothing can compile or sample: ``StanModel.get`` gives a
    :class:`_TrapStanModel` (the real settings and data checks, then :class:`_WouldRunStan`);
    ``StanModel.__init__``, ``sample``, ``fixed_param``, ``_run`` and ``stanc`` raise
    :class:`_WouldRunStan`, except ``stanc --info`` (the inputs a model declares, which the
    data check reads; it compiles nothing). Restored on exit."""
    from pystanprivacy.sampling import stan

    def trap(*args: Any, **kwargs: Any) -> Any:
        raise _WouldRunStan("the Stan layer would have run")

    cls = stan.StanModel
    saved = {name: cls.__dict__[name] for name in ("get", "__init__", "sample", "fixed_param", "_run")}
    saved_stanc = stan._stanc

    def get(cls: Any, name: str, *args: Any, **kwargs: Any) -> _TrapStanModel:
        return _TrapStanModel(name, saved["sample"], saved["fixed_param"])

    def stanc(args: Any, *rest: Any, **kwargs: Any) -> Any:
        if list(args) == ["--info"]:  # the model's declared inputs, read by the data check: no compile
            return saved_stanc(args, *rest, **kwargs)
        return trap()

    cls.get = classmethod(get)
    for name in ("__init__", "sample", "fixed_param", "_run"):
        setattr(cls, name, trap)
    stan._stanc = stanc
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
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 3] + "..."


def _state(accountant: PrivacyAccountant | None) -> Any:
    """What the accountant has spent and recorded, as comparable text (its ledger may hold
    records with arrays, whose ``==`` is not a truth value)."""
    return None if accountant is None else repr((accountant.spent, accountant.ledger))


def _spent(accountant: PrivacyAccountant | None) -> str:
    return "" if accountant is None else repr(accountant.spent)


class _WouldDoWork(BaseException):
    """Raised by the trapped work of the command line (:func:`work_trap`)."""


@dataclasses.dataclass
class _Seen:
    """What one call did: returned ``result``, raised ``exc``, reached Stan or the work trap,
    or hung; whether it charged the accountant; and the side problems (warnings, logs)."""

    result: Any = None
    exc: BaseException | None = None
    stan: bool = False
    work: bool = False
    hung: str = ""
    charged: str = ""
    problems: list[str] = dataclasses.field(default_factory=list)
    numpy_warning: str = ""
    warnings: list[str] = dataclasses.field(default_factory=list)


@contextlib.contextmanager
def _watchdog(fifos: Sequence[str], seconds: float):
    """After ``seconds``, open every FIFO in ``fifos`` for writing and close it again, from a
    separate process (so that a reader blocked in ``open`` inside C code holding the GIL is
    released: it reads end-of-file). Yields a callable telling whether it fired."""
    import subprocess
    import time

    if not fifos:
        yield lambda: False
        return
    start = time.monotonic()
    script = 'sleep "$1"; shift; for f in "$@"; do : > "$f"; done'
    proc = subprocess.Popen(
        ["sh", "-c", script, "sh", str(seconds), *fifos],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield lambda: time.monotonic() - start >= seconds
    finally:
        if proc.poll() is None:
            proc.kill()  # it may still wait for a reader of a FIFO that nobody opened
        proc.wait()


def _observe(
    call: Callable[[], Any],
    accountant: PrivacyAccountant | None = None,
    *,
    fifos: Sequence[str] = (),
    seconds: float = 10.0,
) -> _Seen:
    """Run ``call()`` once, capturing warnings, log records and the accountant's state; a
    call that blocks on one of ``fifos`` is released after ``seconds`` and marked hung."""
    before = _state(accountant)
    spent_before = _spent(accountant)
    capture = _Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    seen = _Seen()
    try:
        with warnings.catch_warnings(record=True) as caught, _watchdog(fifos, seconds) as fired:
            warnings.simplefilter("always")
            try:
                seen.result = call()
            except _WouldRunStan:
                seen.stan = True
            except _WouldDoWork:
                seen.work = True
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - every failure is classified
                seen.exc = e
            if fired():
                seen.hung = f"hung: no answer within {seconds:g} s (a FIFO had to be opened to release it)"
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)
    if _state(accountant) != before:
        seen.charged = f"charged the accountant (spent {spent_before} -> {_spent(accountant)})"
    noisy = [w for w in caught if not issubclass(w.category, P.ReproducibleNotSecureWarning)]
    seen.warnings = [f"{w.category.__name__}: {str(w.message)[:80]}" for w in noisy]
    numpy = [w for w in noisy if w.category is RuntimeWarning]
    if numpy:
        seen.numpy_warning = f"warned (RuntimeWarning: {str(numpy[0].message)[:80]})"
    if any(_has_sentinel(str(w.message)) for w in caught):
        seen.problems.append("a warning quotes the private sentinel")
    if any(_has_sentinel(t) for t in capture.texts):
        seen.problems.append("a log record quotes the private sentinel")
    return seen


def _judge_failure(seen: _Seen, names: Sequence[str], problems: list[str]) -> tuple[str, str]:
    """An exception was raised: :data:`REJECTED` when it is a clear, uncharged refusal,
    :data:`CHARGED` when the accountant was charged first, else :data:`CRASHED`."""
    exc = seen.exc
    assert exc is not None
    problems = list(problems)
    if not isinstance(exc, (TypeError, ValueError)):
        problems.insert(0, f"{type(exc).__name__} is not a TypeError/ValueError")
    if not _names(str(exc), names):
        problems.append(f"message does not name {'/'.join(names)}")
    if _has_sentinel("".join(traceback.format_exception(exc))):
        problems.append("message or chained exception quotes the private sentinel")
    if seen.charged:
        return CHARGED, "; ".join([seen.charged + ", then raised"] + problems) + " | " + _short(exc)
    if problems:
        return CRASHED, "; ".join(problems) + " | " + _short(exc)
    return REJECTED, _short(exc)


def _judge_hostile(seen: _Seen, names: Sequence[str]) -> tuple[str, str]:
    problems = list(seen.problems)
    if seen.warnings:
        problems.insert(0, f"warned ({seen.warnings[0]})")
    charged = [seen.charged] if seen.charged else []
    if seen.hung:
        return CRASHED, "; ".join([seen.hung] + charged + problems)
    if seen.stan:
        return CRASHED, "; ".join(["reached Stan (validation must come first)"] + charged + problems)
    if seen.work:
        return CRASHED, "; ".join(["started the work (validation must come first)"] + problems)
    if seen.exc is None:
        return ACCEPTED, "; ".join(["returned normally"] + ([seen.charged] if seen.charged else []) + problems)
    return _judge_failure(seen, names, problems)


def classify(
    call: Callable[[], Any], names: Sequence[str], *, accountant: PrivacyAccountant | None = None
) -> tuple[str, str]:
    """Run ``call()`` once with a documented-invalid input and classify it as
    :data:`REJECTED`, :data:`ACCEPTED`, :data:`CRASHED` or :data:`CHARGED` (see the module
    docstring); returns ``(outcome, detail)``.

    ``names``: the argument's name and documented aliases (matched as whole words);
    ``accountant``: the accountant handed to the call (it must not be charged on failure).
    Use inside :func:`stan_trap` when the call could reach Stan."""
    return _judge_hostile(_observe(call, accountant), names)


def _judge_valid(
    seen: _Seen, names: Sequence[str], *, expect: str, check: Callable[[Any], list[str]] | None
) -> tuple[str, str]:
    """A documented-valid (extreme) input: a clear, uncharged refusal is allowed
    (:data:`REJECTED`); a sound answer is :data:`SOUND`: reaching Stan with data that pass
    its checks where ``expect == "stan"``, or returning a result that ``check`` (default
    :func:`_sound`) finds nothing wrong with and that raised no numpy ``RuntimeWarning``. A
    wrong result returned without an error is :data:`ACCEPTED`."""
    problems = list(seen.problems)
    if seen.hung:
        return CRASHED, "; ".join([seen.hung] + problems)
    if seen.work:
        return CRASHED, "; ".join(["started the work (validation must come first)"] + problems)
    if seen.stan:
        if expect == "stan" and not problems:
            return SOUND, "reached Stan with data that pass its checks" + (f" ({seen.charged})" if seen.charged else "")
        return CRASHED, "; ".join(["reached Stan (validation must come first)"] + problems)
    if seen.exc is not None:
        if seen.warnings:
            problems.insert(0, f"warned ({seen.warnings[0]})")
        return _judge_failure(seen, names, problems)
    wrong = (check or _sound)(seen.result) + ([seen.numpy_warning] if seen.numpy_warning else [])
    if wrong or problems:
        return ACCEPTED, "; ".join(["returned a wrong result without an error"] + wrong + problems)
    note = f" (warned: {seen.warnings[0]})" if seen.warnings else ""
    return SOUND, "returned a finite, sound result" + note


def classify_valid(
    call: Callable[[], Any],
    names: Sequence[str],
    *,
    accountant: PrivacyAccountant | None = None,
    expect: str = "returns",
    check: Callable[[Any], list[str]] | None = None,
) -> tuple[str, str]:
    """Run ``call()`` once with a documented-valid extreme input (see :func:`_judge_valid`)."""
    return _judge_valid(_observe(call, accountant), names, expect=expect, check=check)


def _finite_problems(what: str, value: Any) -> list[str]:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return []
    if arr.size and not np.all(np.isfinite(arr)):
        return [f"{what} is not finite"]
    return []


def _sound(result: Any) -> list[str]:
    """What is wrong with a returned result (empty: nothing found): a release's values and
    its record's epsilon / delta / scale / sensitivity must be finite; so must a
    mechanism's ``scale`` / ``sigma`` / ``epsilon``, and every number in a returned array,
    tuple or dict."""
    if isinstance(result, Release):
        out = _finite_problems("the released values", result.values)
        rec = result.record
        for field in ("epsilon", "delta", "scale", "sensitivity"):
            value = getattr(rec, field, None)
            if value is not None:
                out += _finite_problems(f"the record's {field}", value)
        return out
    if isinstance(result, (tuple, list)):
        return [p for item in result for p in _sound(item)]
    if isinstance(result, dict):
        return [
            p
            for key, item in result.items()
            for p in _finite_problems(f"[{key!r}]", item)
            if isinstance(item, (int, float, np.number, np.ndarray))
        ]
    if isinstance(result, (float, np.floating, np.ndarray)):
        return _finite_problems("the result", result)
    out = []
    for attr in ("scale", "sigma", "epsilon", "delta", "radius"):
        value = getattr(result, attr, None)
        if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            out += _finite_problems(f"its {attr}", value)
    return out


def _public_record(seen: _Seen) -> Any:
    record = getattr(seen.result, "record", None)
    return record.to_dict() if record is not None and hasattr(record, "to_dict") else record


def _fingerprint(seen: _Seen) -> tuple[str, str, str]:
    """The public face of one call: what it did (returned / reached Stan / raised which
    type), the public record of what it returned, and what it charged."""
    import json

    if seen.stan:
        kind = "reached Stan"
    elif seen.exc is not None:
        kind = f"raised {type(seen.exc).__name__}"
    else:
        kind = "returned"
    record = json.dumps(_public_record(seen), sort_keys=True, default=repr)
    return kind, record, seen.charged or "nothing charged"


def _record_difference(a: _Seen, b: _Seen) -> str:
    """Which fields of the two public records differ (at most three shown)."""
    da, db = _public_record(a), _public_record(b)
    if not (isinstance(da, dict) and isinstance(db, dict)):
        return "the public records differ"
    flat_a = {**da, **{f"details.{k}": v for k, v in (da.get("details") or {}).items()}}
    flat_b = {**db, **{f"details.{k}": v for k, v in (db.get("details") or {}).items()}}
    keys = [
        k for k in sorted(set(flat_a) | set(flat_b)) if k != "details" and repr(flat_a.get(k)) != repr(flat_b.get(k))
    ]
    shown = ", ".join(f"{k} {flat_a.get(k)!r} vs {flat_b.get(k)!r}" for k in keys[:3])
    return "the public records differ: " + (shown or "details")


def _judge_pair(a: _Seen, b: _Seen, names: Sequence[str], *, expect: str) -> tuple[str, str]:
    """Two inputs that differ in one record: each must be answered soundly or refused
    clearly, and both the same way -- same outcome, same public record, same charge --
    else :data:`TOLD_APART` (a neighbour could tell which input was used)."""
    ja = _judge_valid(a, names, expect=expect, check=None)
    jb = _judge_valid(b, names, expect=expect, check=None)
    for bad in (CHARGED, CRASHED, ACCEPTED):
        for who, (outcome, detail) in (("first", ja), ("second", jb)):
            if outcome == bad:
                return bad, f"{who}: {detail}"
    fa, fb = _fingerprint(a), _fingerprint(b)
    if fa != fb:
        if fa[0] != fb[0] or fa[2] != fb[2]:
            why = f"first {fa[0]}, {fa[2]}; second {fb[0]}, {fb[2]}"
        else:
            why = _record_difference(a, b)
        return TOLD_APART, why + f" | first: {ja[1]} | second: {jb[1]}"
    if ja[0] == REJECTED:
        return REJECTED, f"both refused alike: {ja[1]}"
    return SOUND, f"both answered alike ({fa[0]}, {fa[2]})"


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


_DROP = object()  # d_with(key=_DROP): the key is left out
ACC = object()  # placeholder: the case's (watched) PrivacyAccountant
_EXHAUSTED = object()  # hostile value: an accountant whose budget cannot cover the call

BIG_BUDGET = (1e6, 0.5)
#: the budget of a documented-valid extreme case: it covers any epsilon and delta the case asks for
VALID_BUDGET = (sys.float_info.max, 1 - 2**-53)
TINY_BUDGET = (1e-6, 0.0)

TYPES = [
    ("str", "1.0"),
    ("bytes", b"1"),
    ("None", None),
    ("bool", True),
    ("complex", 1 + 0j),
    ("object", _Opaque()),
    ("list", [1.0]),
    ("1-element array", np.array([1.0])),
]


def _types(optional: bool = False) -> list[tuple[str, Any]]:
    return [t for t in TYPES if not (optional and t[1] is None)]


def positive(optional: bool = False) -> list[tuple[str, Any]]:
    """Never a valid epsilon / sensitivity / scale / radius / total / bound."""
    return [
        ("NaN", NAN),
        ("+inf", INF),
        ("-inf", -INF),
        ("0", 0.0),
        ("-0.0", -0.0),
        ("negative", -1.0),
        ("-1e308", -1e308),
        ("negative tiny (-5e-324)", -5e-324),
    ] + _types(optional)


def delta_values(positive_only: bool = False) -> list[tuple[str, Any]]:
    out = [
        ("NaN", NAN),
        ("+inf", INF),
        ("-inf", -INF),
        ("negative", -0.1),
        ("negative tiny (-5e-324)", -5e-324),
        ("1", 1.0),
        ("1.5", 1.5),
        ("huge (1e308)", 1e308),
    ] + _types()
    return out + ([("0", 0.0)] if positive_only else [])


def open_unit() -> list[tuple[str, Any]]:
    """Never in (0, 1)."""
    return [
        ("NaN", NAN),
        ("+inf", INF),
        ("-inf", -INF),
        ("0", 0.0),
        ("1", 1.0),
        ("negative", -0.5),
        ("1.5", 1.5),
        ("huge (1e308)", 1e308),
    ] + _types()


def ints(minimum: int, optional: bool = False) -> list[tuple[str, Any]]:
    out = [
        (f"{minimum - 1} (< {minimum})", minimum - 1),
        ("non-integer float", minimum + 0.5),
        ("NaN", NAN),
        ("+inf", INF),
        ("str", str(minimum + 1)),
        ("bool", True),
        ("complex", 2j),
        ("list", [minimum + 1]),
    ]
    if minimum - 1 != -1:
        out.insert(1, ("-1", -1))
    return out + ([] if optional else [("None", None)])


SEEDS = [
    ("negative", -1),
    ("float", 1.5),
    ("NaN", NAN),
    ("str", "0"),
    ("bool", True),
    ("object", _Opaque()),
    ("RandomState", np.random.RandomState(0)),
    ("list", [0]),
]
LABELS = [("int", 1), ("bytes", b"x"), ("bool", True), ("object", _Opaque()), ("list", ["a"])]
NEIGHBOURING = [
    ("unknown str", "bogus"),
    ("empty str", ""),
    ("wrong case", "Replace-One"),
    ("None", None),
    ("int", 1),
    ("bytes", b"replace-one"),
]
ACCOUNTANTS = [
    ("budget too small", _EXHAUSTED),
    ("float", 1.0),
    ("str", "accountant"),
    ("dict", {"epsilon": 1.0}),
    ("duck-typed object", _FakeAccountant()),
    ("the class itself", PrivacyAccountant),
]
BOUNDS = [
    ("reversed", (1.0, 0.0)),
    ("equal", (0.5, 0.5)),
    ("NaN", (NAN, 1.0)),
    ("+inf", (0.0, INF)),
    ("-inf", (-INF, 0.0)),
    ("str", "ab"),
    ("one element", (0.0,)),
    ("three elements", (0.0, 0.5, 1.0)),
    ("str element", ("0", 1.0)),
    ("None element", (None, 1.0)),
    ("complex element", (0j, 1.0)),
    ("scalar", 1.0),
    ("dict", {"lower": 0.0}),
    ("set", {0.0, 1.0}),
]
DETAILS = [
    ("str", "details"),
    ("list", [1]),
    ("NaN inside", {"a": NAN}),
    ("inf inside", {"a": INF}),
    ("object inside", {"a": _Opaque()}),
    ("non-str key", {1: "a"}),
    ("array inside", {"a": np.array([1.0])}),
]
BUDGET_SPLITS = [("str", "half"), ("list", [0.5]), ("NaN inside", {"c": NAN}), ("object inside", {"c": _Opaque()})]
THRESHOLDS = [("str", "strict"), ("dict", {"max_rhat": 1.1}), ("int", 1)]
FLAGS = [("str", "yes"), ("int", 1), ("None", None)]
ADAPT_DELTA = [
    ("0", 0.0),
    ("1", 1.0),
    ("NaN", NAN),
    ("negative", -0.5),
    ("1.5", 1.5),
    ("str", "0.8"),
    ("None", None),
    ("bool", True),
]


def _nonnumeric(g: np.ndarray) -> list[tuple[str, Any]]:
    return [
        ("str array", g.astype(str)),
        ("bytes array", g.astype(bytes)),
        ("object array", g.astype(object)),
        ("complex array", g.astype(complex)),
        ("None", None),
        ("str", "1.0"),
        ("dict", {"x": 1.0}),
        ("ragged", [[SENTINEL], [1.0, 2.0]]),
        ("list of objects", [_Opaque(), _Opaque()]),
    ]


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


def real_data(
    good: Any,
    *,
    ndim: Sequence[int] | None = None,
    empty: bool = True,
    bool_invalid: bool = False,
    nonnegative: bool = False,
) -> list[tuple[str, Any]]:
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


def int_data(
    good: Any, *, lo: int, hi: int | None, ndim: Sequence[int] | None = None, empty: bool = True
) -> list[tuple[str, Any]]:
    """Hostile variants of integer private data in [lo, hi] (hi None: unbounded)."""
    g = np.asarray(good, dtype=float)
    out = [
        ("NaN", _put(g, NAN)),
        ("+inf", _put(g, INF)),
        ("-inf", _put(g, -INF)),
        ("non-integer", _put(g, lo + 0.5)),
        (f"below {lo}", _put(g, lo - 1)),
        ("sentinel (non-integer)", _put(g, SENTINEL)),
    ] + _nonnumeric(g)
    if hi is not None:
        out += [(f"above {hi}", _put(g, hi + 1)), ("huge (1e308)", _put(g, 1e308))]
    return out + _axes(g, ndim) + (_empties(g, ndim) if empty else [])


class _Checked:
    """A documented-valid value whose answer needs a check of its own (``check(result)``
    returns what is wrong, empty when nothing), e.g. that a huge epsilon loses no data."""

    def __init__(self, value: Any, check: Callable[[Any], list[str]], **others: Any) -> None:
        self.value, self.check, self.others = value, check, others


class _Pair:
    """Two values of one argument that differ in one record (``others``: further arguments
    changed for both)."""

    def __init__(self, first: Any, second: Any, **others: Any) -> None:
        self.first, self.second, self.others = first, second, others


@dataclasses.dataclass
class Entry:
    """One public entry point. ``call(accountant, kwargs)`` calls it with the keyword
    arguments ``base`` (all valid; :data:`ACC` stands for the case's watched accountant), where
    one argument at a time is replaced by each ``(label, value)`` of ``hostile[argument]``
    (documented invalid: must be rejected clearly), of ``valid[argument]`` (documented valid
    extremes: refused clearly or answered soundly) or each ``(label, _Pair)`` of
    ``pairs[argument]`` (neighbouring inputs: must be treated alike); ``names[argument]``
    lists the names a clear message may use (default: the argument)."""

    family: str
    name: str
    call: Callable[[PrivacyAccountant, dict[str, Any]], Any]
    base: dict[str, Any]
    hostile: dict[str, list[tuple[str, Any]]]
    names: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    expect: str = "returns"  # what the valid call does: "returns", "stan" (reaches the trap) or "work"
    valid: dict[str, list[tuple[str, Any]]] = dataclasses.field(default_factory=dict)
    pairs: dict[str, list[tuple[str, _Pair]]] = dataclasses.field(default_factory=dict)


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


def _fifos(values: Any) -> list[str]:
    """The FIFOs (named pipes, also through a symbolic link) among the path-like arguments."""
    import os
    import stat

    out: list[str] = []
    for v in values:
        items = v if isinstance(v, (list, tuple)) else [v]
        for item in items:
            if isinstance(item, (str, os.PathLike)) and str(item):
                try:
                    if stat.S_ISFIFO(os.stat(item).st_mode):
                        out.append(str(item))
                except (OSError, ValueError):
                    pass
    return out


def _case(
    entry: Entry, arg: str, value: Any, others: dict[str, Any], *, valid: bool = False
) -> tuple[Callable[[], Any], PrivacyAccountant, list[str]]:
    acc = PrivacyAccountant(*(TINY_BUDGET if value is _EXHAUSTED else VALID_BUDGET if valid else BIG_BUDGET))
    kwargs = {k: _fresh(v, acc) for k, v in {**entry.base, **others}.items()}
    fn = entry.call

    def call() -> Any:  # a _Lazy value is built inside the call: its construction is part of it
        return fn(acc, {**kwargs, arg: _fresh(value, acc)})

    return call, acc, _fifos([*kwargs.values(), value])


def _path_name(value: Any) -> tuple[str, ...]:
    """A path given as the hostile value is public (the caller's own argument): a message
    may name it instead of the argument."""
    import os

    return (str(value),) if isinstance(value, (str, os.PathLike)) and str(value) else ()


def run_entry(entry: Entry) -> list[Row]:
    """The valid call (a crashed ``(valid call)`` row if it misbehaves), then one row per
    hostile value, valid extreme and pair; use inside :func:`stan_trap`."""
    rows: list[Row] = []
    # the valid call: the census is only meaningful when it does what it should
    acc = PrivacyAccountant(*BIG_BUDGET)
    kwargs = {k: _fresh(v, acc) for k, v in entry.base.items()}
    seen = _observe(lambda: entry.call(acc, kwargs), acc, fifos=_fifos(kwargs.values()))
    got = (
        "hung"
        if seen.hung
        else "stan"
        if seen.stan
        else "work"
        if seen.work
        else _short(seen.exc)
        if seen.exc is not None
        else "returns"
    )
    if got != entry.expect:
        want = {"stan": "reach Stan", "work": "start the work"}.get(entry.expect, "return")
        rows.append(
            Row(
                entry.family,
                entry.name,
                "(valid call)",
                "baseline",
                CRASHED,
                f"the valid call should {want}, got: {got}",
            )
        )
    for arg, values in entry.hostile.items():
        names = entry.names.get(arg, (arg,))
        for label, value in values:
            others: dict[str, Any] = {}
            if isinstance(value, _With):
                value, others = value.value, value.others
            call, acc, fifos = _case(entry, arg, value, others)
            names_here = names + (("budget",) if value is _EXHAUSTED else ()) + _path_name(value)
            outcome, detail = _judge_hostile(_observe(call, acc, fifos=fifos), names_here)
            rows.append(Row(entry.family, entry.name, arg, label, outcome, detail))
    for arg, values in entry.valid.items():
        names = entry.names.get(arg, (arg,))
        for label, value in values:
            check, others = None, {}
            if isinstance(value, (_With, _Checked)):
                others = value.others
                check = value.check if isinstance(value, _Checked) else None
                value = value.value
            call, acc, fifos = _case(entry, arg, value, others, valid=True)
            outcome, detail = _judge_valid(
                _observe(call, acc, fifos=fifos), names + tuple(others), expect=entry.expect, check=check
            )
            rows.append(Row(entry.family, entry.name, arg, f"{label} (valid)", outcome, detail))
    for arg, pairs in entry.pairs.items():
        names = entry.names.get(arg, (arg,))
        for label, pair in pairs:
            seen = []
            for value in (pair.first, pair.second):
                call, acc, fifos = _case(entry, arg, value, pair.others, valid=True)
                seen.append(_observe(call, acc, fifos=fifos))
            outcome, detail = _judge_pair(seen[0], seen[1], names + tuple(pair.others), expect=entry.expect)
            rows.append(Row(entry.family, entry.name, arg, f"pair {label}", outcome, detail))
    return rows


# ---------------------------------------------------------------------------- extremes and pairs
FLOAT_MAX = sys.float_info.max


def extremes() -> list[tuple[str, float]]:
    """Documented-valid positive parameters at the edges of float64 (a clear range refusal
    is allowed, a crash, a charge before failing or a non-finite answer is not). 1.8e308
    itself parses to +inf (refused by :func:`positive`); the largest float is 1.797e308."""
    return [
        ("tiny (5e-324)", 5e-324),
        ("subnormal (1e-310)", 1e-310),
        ("huge (1e300)", 1e300),
        ("float max (1.797e308)", FLOAT_MAX),
    ]


def delta_extremes() -> list[tuple[str, float]]:
    return [("tiny (5e-324)", 5e-324), ("subnormal (1e-310)", 1e-310), ("just below 1 (1 - 2^-53)", 1 - 2**-53)]


def unit_extremes() -> list[tuple[str, float]]:
    return [("tiny (5e-324)", 5e-324), ("subnormal (1e-310)", 1e-310), ("just below 1 (1 - 2^-53)", 1 - 2**-53)]


def bounds_extremes() -> list[tuple[str, tuple[float, float]]]:
    return [
        ("subnormal width (0, 1e-310)", (0.0, 1e-310)),
        ("tiny width (0, 5e-324)", (0.0, 5e-324)),
        ("huge (-1e300, 1e300)", (-1e300, 1e300)),
        ("whole float range (-max, max)", (-FLOAT_MAX, FLOAT_MAX)),
        ("nonnegative, huge (0, float max)", (0.0, FLOAT_MAX)),
        ("far from zero (1e300, 2e300)", (1e300, 2e300)),
    ]


#: argument name -> its documented-valid extremes (added to every entry point that takes it)
EXTREMES: dict[str, Callable[[], list[tuple[str, Any]]]] = {
    "epsilon": extremes,
    "sensitivity": extremes,
    "scale": extremes,
    "radius": extremes,
    "total": extremes,
    "max_norm": extremes,
    "R": extremes,
    "R_y": extremes,
    "bound": extremes,
    "multiplier": extremes,
    "delta": delta_extremes,
    "c": unit_extremes,
    "bounds": bounds_extremes,
    "scale_ratios": lambda: [
        ("tiny (5e-324, 1)", [5e-324, 1.0]),
        ("huge (1e300, 1)", [1e300, 1.0]),
        ("float max (max, max)", [FLOAT_MAX, FLOAT_MAX]),
    ],
}


def _add_extremes(entries: list[Entry]) -> list[Entry]:
    """Give every entry point the documented-valid extremes of each argument it takes whose
    name is in :data:`EXTREMES` (in its base call or among its hostile cases)."""
    for e in entries:
        for arg in list(e.base) + [a for a in e.hostile if a not in e.base]:
            if arg in EXTREMES and arg not in e.valid:
                e.valid[arg] = EXTREMES[arg]()
    return entries


def int_pairs(domain: Callable[[Any], bool] | None = None, *, n: int = 3) -> list[tuple[str, _Pair]]:
    """Python-int lists of length ``n`` that differ in their last record, at the int64 and
    uint64 edges (where NumPy's inferred dtype changes: int64, uint64, object), beyond
    float64, and an int list against one with a float. ``domain``: the declared domain of one
    record when it is not every real (bits, categories, nonnegative values): then only the
    pairs whose two records are both inside or both outside it, since a value outside a
    declared domain is refused by design ("Refusals, and what they reveal")."""
    head = [1, 0, 1, 0][: n - 1]
    pairs = [
        ("[.., 2**64] vs [.., 2**64 - 1] (object vs uint64)", 2**64, 2**64 - 1),
        ("[.., 2**63 - 1] vs [.., 2**63] (int64 vs uint64)", 2**63 - 1, 2**63),
        ("[.., -2**63] vs [.., -2**63 - 1] (int64 vs object)", -(2**63), -(2**63) - 1),
        ("[.., 2**64 - 1] vs [.., -1] (uint64 vs int64)", 2**64 - 1, -1),
        ("[.., 10**400] vs [.., 2**64] (beyond float64 vs object)", 10**400, 2**64),
        ("[.., 1] vs [.., 2**64] (int64 vs object)", 1, 2**64),
        ("[.., 1] vs [.., 1.5] (int64 vs float64)", 1, 1.5),
        ("[.., 0] vs [.., 0.0] (int64 vs float64, one value)", 0, 0.0),
    ]
    return [(label, _Pair(head + [a], head + [b])) for label, a, b in pairs if domain is None or domain(a) == domain(b)]


def _categories(d: int) -> Callable[[Any], bool]:
    """Categories 0..d-1 (an integer-valued float such as 0.0 is one)."""
    return lambda v: v == int(v) and 0 <= v < d


_bits = _categories(2)


def _nonnegative(v: Any) -> bool:
    return v >= 0


def int_matrix_pairs(
    rows: int = 3, cols: int = 2, domain: Callable[[Any], bool] | None = None
) -> list[tuple[str, _Pair]]:
    """:func:`int_pairs` for a ``rows`` x ``cols`` matrix of Python ints (the last entry differs)."""
    out = []
    for label, pair in int_pairs(domain, n=cols):
        first = [[(i + j) % 2 for j in range(cols)] for i in range(rows - 1)]
        out.append((label, _Pair(first + [pair.first], first + [pair.second])))
    return out


def _pairs_table() -> dict[str, dict[str, list[tuple[str, _Pair]]]]:
    """Entry point -> argument -> neighbouring Python-int lists (:func:`int_pairs`) in its
    declared domain (the data of the base call are 3 records; matrices 3 x 2)."""
    real, matrix = int_pairs(), int_matrix_pairs(3, 2)
    bits, cats, nonneg = int_pairs(_bits), int_pairs(_categories(3)), int_pairs(_nonnegative)
    table: dict[str, dict[str, list[tuple[str, _Pair]]]] = {
        "ldp.clipped_laplace_reports": {"x": real},
        "ldp.gaussian_reports": {"values": matrix},
        "ldp.randomized_response_reports": {"bits": bits},
        "ldp.oue_reports": {"x": cats},
        "foulds2016.BetaBernoulli.release": {"x": bits},
        "bernstein2018.BinomialBeta.release": {"x": bits},
        "bernstein2018.MultinomialDirichlet.release": {"x": cats},
        "bernstein2018.ExponentialGamma.release": {"x": nonneg},
        "kulkarni2022.GaussianLDP.release": {"x": real},
        "kulkarni2022.ExponentialLDP.release": {"x": nonneg},
        "kulkarni2022.HistogramOUE.release": {"x": cats},
        "foulds2016.BetaBernoulliOPS.sample_one": {"x": bits},
    }
    for name in ("LinearRegressionSS", "LinearRegressionInputs"):
        table[f"kulkarni2022_regression.{name}.release"] = {"x": matrix, "y": real}
    for name in ("LogisticRegressionSS", "LogisticRegressionInputs"):
        table[f"kulkarni2022_regression.{name}.release"] = {"x": matrix, "y": bits}
    for name, y in (
        ("LogisticRegressionBetaD", bits),
        ("NNClassifierBetaD", bits),
        ("LinearRegressionBetaD", real),
        ("NNRegressionBetaD", real),
    ):
        for method in ("sample_one", "try_sample_one"):
            table[f"jewson2023.{name}.{method}"] = {"X": matrix, "y": y}
    return table


def _add_pairs(entries: list[Entry]) -> list[Entry]:
    table = _pairs_table()
    for e in entries:
        for arg, pairs in table.get(e.name, {}).items():
            e.pairs.setdefault(arg, []).extend(pairs)
    return entries


def _lossless(index: int, expected: float, rel: float = 1e-6) -> Callable[[Any], list[str]]:
    """A check for a release whose noise is negligible (epsilon 1e300): coordinate ``index``
    must come back within ``rel`` of ``expected`` (no silent clamp), unless the record
    states that coordinates were clamped."""

    def check(result: Any) -> list[str]:
        out = _sound(result)
        values = np.asarray(getattr(result, "values", result), dtype=float).reshape(-1)
        got = float(values[index])
        if abs(got - expected) > rel * abs(expected) + 1e-6:
            details = getattr(getattr(result, "record", None), "details", None) or {}
            if not any("clamp" in str(k) for k in details):
                out.append(f"coordinate {index} came back as {got:.6g}, not {expected:.6g}: clamped without a word")
        return out

    return check


def _no_clamp(index: int, expected: float) -> Callable[[Any], list[str]]:
    """A check for a release with real noise: coordinate ``index`` must not come back pinned
    at the edge of the record's ``representable_range`` below ``expected`` (a silent clamp)."""

    def check(result: Any) -> list[str]:
        out = _sound(result)
        details = getattr(getattr(result, "record", None), "details", None) or {}
        rng = details.get("representable_range")
        if rng is not None and expected > float(rng[1]) and not any("clamp" in str(k) for k in details):
            out.append(f"{expected:.6g} is beyond the representable range {rng}: clamped without a word")
        return out

    return check


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
        out.append(
            Entry("mechanisms", f"mechanisms.{name}(...)", lambda acc, kw, cls=cls: cls(**kw), dict(params), ctor)
        )
        if domain is None:
            value = real_data(good, bool_invalid=True)
            value_no_empty = real_data(good, bool_invalid=True, empty=False)
        else:
            value = int_data(good, lo=domain[0], hi=domain[1])
            value_no_empty = int_data(good, lo=domain[0], hi=domain[1], empty=False)
        mech = cls(**params)
        release = {
            "value": value,
            "accountant": ACCOUNTANTS,
            "n": ints(1, optional=True),
            "bounds": BOUNDS,
            "neighbouring": NEIGHBOURING,
            "label": LABELS,
            "changed": ints(1, optional=True),
        }
        out.append(
            Entry(
                "mechanisms",
                f"mechanisms.{name}.release",
                lambda acc, kw, mech=mech: mech.release(**kw),
                {"value": good, "accountant": ACC},
                release,
            )
        )
        out.append(
            Entry(
                "mechanisms",
                f"mechanisms.{name}.randomise",
                lambda acc, kw, mech=mech: mech.randomise(**kw),
                {"value": good},
                {"value": value_no_empty, "changed": ints(1, optional=True)},
            )
        )
        # the constructor's public parameters and the data together: extremes, neighbouring pairs
        # two records, as in issue 53 ([1, 2**64] vs [1, 2**64 - 1], [1, 2**63 - 1] vs [1, 2**63])
        combined = {"value": int_pairs(None if domain is None else _categories(domain[1] + 1), n=2)}
        valid: dict[str, list[tuple[str, Any]]] = {}
        if domain is None:
            h = np.full(10000, 262144.0)
            h[0] = 3e5
            lossy = {"epsilon": 1e300} if name != "Gaussian" else {"epsilon": 0.999}
            valid["value"] = [
                (
                    "a count of 3e5 among 10^4 counts of 2^18 (float, negligible noise)",
                    _Checked(h, _lossless(0, 3e5), **lossy),
                ),
                (
                    "a count of 3e5 among 10^4 counts of 2^18 (int64, negligible noise)",
                    _Checked(h.astype(np.int64), _lossless(0, 3e5), **lossy),
                ),
                (
                    "a count of 2^40 (float, negligible noise)",
                    _Checked(np.array([2.0**40, 1.0]), _lossless(0, 2.0**40), **lossy),
                ),
            ]
            if name == "Gaussian":  # epsilon < 1: the noise is not negligible, only the clamp is checked
                valid["value"] = [
                    (label, _Checked(v.value, _no_clamp(0, float(v.value[0])), **v.others))
                    for label, v in valid["value"]
                ]
        out.append(
            Entry(
                "mechanisms",
                f"mechanisms.{name}(...).release",
                lambda acc, kw, cls=cls, params=params: cls(**{k: v for k, v in kw.items() if k in params}).release(
                    **{k: v for k, v in kw.items() if k not in params}
                ),
                {**params, "value": good, "accountant": ACC},
                {},
                valid=valid,
                pairs=combined,
            )
        )
    lower_upper = [("NaN", NAN), ("+inf", INF), ("-inf", -INF)] + _types()
    out.append(
        Entry(
            "mechanisms",
            "mechanisms.Clip(...)",
            lambda acc, kw: M.Clip(**kw),
            {"lower": 0.0, "upper": 1.0},
            {
                "lower": lower_upper + [("above upper", 2.0), ("equal to upper", 1.0)],
                "upper": lower_upper + [("below lower", -1.0)],
            },
            names={"lower": ("lower",), "upper": ("upper",)},
        )
    )
    out.append(
        Entry(
            "mechanisms",
            "mechanisms.Clip.__call__",
            lambda acc, kw: M.Clip(0.0, 1.0)(**kw),
            {"x": real},
            {"x": real_data(real, empty=False, bool_invalid=True)},
        )
    )
    out.append(
        Entry(
            "mechanisms",
            "mechanisms.ClipL2(...)",
            lambda acc, kw: M.ClipL2(**kw),
            {"radius": 1.0},
            {"radius": positive()},
        )
    )
    rows = np.array([[0.5, SENTINEL], [-2.0, 0.1]])
    out.append(
        Entry(
            "mechanisms",
            "mechanisms.ClipL2.__call__",
            lambda acc, kw: M.ClipL2(1.0)(**kw),
            {"x": rows},
            {"x": real_data(rows, ndim=(1, 2), empty=False, bool_invalid=True)},
        )
    )
    out.append(
        Entry(
            "mechanisms",
            "mechanisms.project_nonnegative",
            lambda acc, kw: M.project_nonnegative(**kw),
            {"x": real},
            {"x": real_data(real, empty=False, bool_invalid=True)},
        )
    )
    out.append(
        Entry(
            "mechanisms",
            "mechanisms.project_simplex",
            lambda acc, kw: M.project_simplex(**kw),
            {"x": rows, "total": 1.0},
            {
                "x": real_data(rows, ndim=(1, 2), empty=False, bool_invalid=True)
                + [("no columns", np.zeros((2, 0))), ("empty 1-d", np.zeros(0))],
                "total": positive(),
            },
        )
    )
    return out


# ---------------------------------------------------------------------------- ldp
def _ldp_entries() -> list[Entry]:
    common = {"accountant": ACCOUNTANTS, "seed": SEEDS, "label": LABELS, "details": DETAILS}
    x = np.array([0.2, SENTINEL, -3.0])
    vals = np.array([[0.2, 0.1], [SENTINEL, 0.4], [-1.0, 0.0]])
    out = [
        Entry(
            "ldp",
            "ldp.clipped_laplace_reports",
            lambda acc, kw: ldp.clipped_laplace_reports(**kw),
            {"x": x, "epsilon": 1.0, "bounds": (0.0, 1.0), "accountant": ACC},
            {
                "x": real_data(x, ndim=(1, 2), bool_invalid=True),
                "epsilon": positive(),
                "bounds": [b for b in BOUNDS],
                **common,
                "budget_split": BUDGET_SPLITS,
            },
        ),
        Entry(
            "ldp",
            "ldp.gaussian_reports",
            lambda acc, kw: ldp.gaussian_reports(**kw),
            {"values": vals, "epsilon": 1.0, "delta": 1e-5, "sensitivity": 2.0, "accountant": ACC},
            {
                "values": real_data(vals, ndim=(1, 2), bool_invalid=True),
                "epsilon": positive(),
                "delta": delta_values(positive_only=True),
                "sensitivity": positive(),
                "scale_ratios": [
                    ("wrong length", [1.0]),
                    ("2-d", [[1.0, 1.0]]),
                    ("zero", [0.0, 1.0]),
                    ("negative", [-1.0, 1.0]),
                    ("NaN", [NAN, 1.0]),
                    ("+inf", [INF, 1.0]),
                    ("str", "1,1"),
                    ("str array", np.array(["1", "1"])),
                    ("complex", [1j, 1.0]),
                ],
                "max_norm": positive(optional=True) + [("above sensitivity / 2", 5.0)],
                **common,
                "budget_split": BUDGET_SPLITS,
            },
            names={"max_norm": ("max_norm",)},
        ),
        Entry(
            "ldp",
            "ldp.randomized_response_reports",
            lambda acc, kw: ldp.randomized_response_reports(**kw),
            {"bits": np.array([0, 1, 1]), "epsilon": 1.0, "accountant": ACC},
            {
                "bits": int_data([0, 1, 1], lo=0, hi=1, ndim=(1,)),
                "epsilon": positive(),
                **common,
                "budget_split": BUDGET_SPLITS,
            },
        ),
        Entry(
            "ldp",
            "ldp.oue_reports",
            lambda acc, kw: ldp.oue_reports(**kw),
            {"x": np.array([0, 2, 1]), "epsilon": 1.0, "d": 3, "accountant": ACC},
            {"x": int_data([0, 2, 1], lo=0, hi=2, ndim=(1, 2)), "epsilon": positive(), "d": ints(2), **common},
        ),
        Entry(
            "ldp",
            "ldp.aggregate_reports",
            lambda acc, kw: ldp.aggregate_reports(**kw),
            {"reports": np.array([[0, 1], [1, 0], [0, 1]])},
            {"reports": int_data([[0, 1], [1, 0], [0, 1]], lo=0, hi=1, ndim=(2,))},
        ),
        Entry(
            "ldp",
            "ldp.split_budget",
            lambda acc, kw: ldp.split_budget(**kw),
            {"epsilon": 1.0, "c": 0.5},
            {"epsilon": positive(), "c": open_unit()},
        ),
        Entry(
            "ldp",
            "ldp.budget_split_details",
            lambda acc, kw: ldp.budget_split_details(**kw),
            {"epsilon": 1.0, "c": 0.5},
            {"epsilon": positive(), "c": open_unit()},
        ),
        Entry(
            "ldp",
            "ldp.oue_probabilities",
            lambda acc, kw: ldp.oue_probabilities(**kw),
            {"epsilon": 1.0},
            {"epsilon": positive()},
        ),
    ]
    return out


# ---------------------------------------------------------------------------- privacy
def _privacy_entries() -> list[Entry]:
    rec = PrivacyRecord(
        mechanism="laplace", epsilon=1.0, sensitivity=1.0, sensitivity_norm="l1", scale=1.0, bounds=(0.0, 1.0), n=3
    )
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

    release_values = [
        ("NaN", np.array([0.5, NAN])),
        ("+inf", np.array([INF, 0.5])),
        ("-inf", np.array([-INF, 0.5])),
        ("str array", np.array(["0.5", "1.5"])),
        ("bytes array", np.array([b"0.5"])),
        ("object array", np.array([0.5, 1.5], dtype=object)),
        ("complex array", np.array([1j, 0.5])),
        ("None", None),
        ("str", "0.5"),
        ("dict", {"x": 0.5}),
        ("ragged", [[0.5], [1.0, 2.0]]),
        ("list of objects", [_Opaque()]),
        ("empty", np.zeros(0)),
        ("empty 2-d", np.zeros((2, 0))),
    ]
    return [
        Entry(
            "privacy",
            "privacy.PrivacyAccountant(...)",
            lambda acc, kw: PrivacyAccountant(**kw),
            {"epsilon": 1.0, "delta": 0.0},
            {"epsilon": positive(), "delta": delta_values()},
        ),
        Entry(
            "privacy",
            "privacy.PrivacyAccountant.spend",
            lambda acc, kw: acc.spend(**kw),
            {"epsilon": 1.0, "delta": 0.0},
            {
                "epsilon": positive() + [("exceeds the budget", 2e6)],
                "delta": delta_values() + [("exceeds the budget", 0.9)],
                "label": LABELS,
            },
        ),
        Entry(
            "privacy",
            "privacy.PrivacyAccountant.check",
            lambda acc, kw: acc.check(**kw),
            {"epsilon": 1.0, "delta": 0.0},
            {"epsilon": positive(), "delta": delta_values()},
        ),
        Entry(
            "privacy",
            "privacy.PrivacyRecord(...)",
            lambda acc, kw: PrivacyRecord(**kw),
            {
                "mechanism": "laplace",
                "epsilon": 1.0,
                "delta": 0.0,
                "sensitivity": 1.0,
                "sensitivity_norm": "l1",
                "scale": 1.0,
                "bounds": (0.0, 1.0),
                "n": 3,
                "neighbouring": "replace-one",
                "details": {},
            },
            {
                "mechanism": [("empty str", ""), ("None", None), ("int", 1), ("bytes", b"laplace")],
                "epsilon": positive(),
                "delta": delta_values(),
                "sensitivity": positive(optional=True),
                "sensitivity_norm": [("unknown", "l3"), ("int", 1), ("bytes", b"l1")],
                "scale": positive(optional=True),
                "bounds": BOUNDS,
                "n": ints(1, optional=True),
                "neighbouring": NEIGHBOURING,
                "details": DETAILS,
            },
        ),
        Entry(
            "privacy",
            "privacy.Release(...)",
            lambda acc, kw: Release(**kw),
            {"values": good_values, "record": rec},
            {
                "values": release_values,
                "record": [
                    ("dict", rec_dict),
                    ("None", None),
                    ("str", "laplace"),
                    ("Release", _Lazy(lambda: Release(values=good_values, record=rec))),
                ],
            },
        ),
        Entry(
            "privacy",
            "privacy.Release.from_dict",
            lambda acc, kw: Release.from_dict(_pick_d(kw)),
            {"d": d_with()},
            {
                "d": [
                    ("None", None),
                    ("list", [[0.5], rec_dict]),
                    ("str", "release"),
                    ("Release", _Lazy(lambda: Release(values=good_values, record=rec))),
                    ("missing 'record'", d_with(record=_DROP)),
                    ("missing 'values'", d_with(values=_DROP)),
                    ("unknown key", d_with(extra=1)),
                ],
                "d['values']": [
                    ("NaN", d_with(values=[0.5, NAN])),
                    ("+inf", d_with(values=[INF, 0.5])),
                    ("str", d_with(values=["0.5", "1.5"])),
                    ("ragged", d_with(values=[[0.5], [1.0, 2.0]], shape=_DROP)),
                    ("None", d_with(values=None, shape=_DROP)),
                    ("dict", d_with(values={"a": 1}, shape=_DROP)),
                    ("empty", d_with(values=[], shape=[0])),
                ],
                "d['shape']": [
                    ("does not match", d_with(shape=[3])),
                    ("str", d_with(shape="2")),
                    ("negative", d_with(shape=[-1, -2])),
                    ("floats", d_with(shape=[2.0])),
                    ("bools", d_with(shape=[True, True])),
                    ("None", d_with(shape=None)),
                ],
                "d['record']": [
                    ("None", d_with(record=None)),
                    ("str", d_with(record="laplace")),
                    ("unknown field", d_with(record=rec_with(colour="red"))),
                    ("NaN epsilon", d_with(record=rec_with(epsilon=NAN))),
                    ("negative epsilon", d_with(record=rec_with(epsilon=-1.0))),
                    ("delta 1", d_with(record=rec_with(delta=1.0))),
                    ("bad neighbouring", d_with(record=rec_with(neighbouring="bogus"))),
                    ("reversed bounds", d_with(record=rec_with(bounds=[1.0, 0.0]))),
                ],
            },
            names={
                "d": ("d", "record", "values"),
                "d['values']": ("values",),
                "d['shape']": ("shape",),
                "d['record']": ("record", "PrivacyRecord", "d", "epsilon", "delta", "neighbouring", "bounds"),
            },
        ),
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
        ("features disagree", _put(HMM_COUNTS, 2, 0)),
        ("columns do not match feature_sizes", np.ones((2, 3, 5), int)),
    ]
    feature_sizes = [
        ("sum mismatch", [2, 3]),
        ("size 1", [1, 3]),
        ("None", None),
        ("str", "22"),
        ("non-integer", [2.5, 2.5]),
        ("NaN entry", [NAN, 2]),
        ("negative", [-2, 6]),
        ("empty", []),
        ("int", 4),
        ("object", _Opaque()),
    ]
    eps_per_feature = [
        ("wrong length", [1.0]),
        ("NaN entry", [NAN, 1.0]),
        ("zero entry", [0.0, 1.0]),
        ("negative entry", [-1.0, 2.0]),
        ("str", "1,1"),
        ("scalar", 1.0),
        ("None entry", [None, 1.0]),
        ("given with epsilon", _With([0.5, 0.5], epsilon=1.0)),
    ]
    out = [
        Entry(
            fam,
            "foulds2016.BetaBernoulli.release",
            lambda acc, kw: F.BetaBernoulli.release(**kw),
            {"x": B3, "epsilon": 1.0, "accountant": ACC},
            {"x": int_data(B3, lo=0, hi=1, ndim=(1, 2)), "epsilon": positive(), **acc_seed},
        ),
        Entry(
            fam,
            "foulds2016_hmm.NaiveBayesHMM.release",
            lambda acc, kw: H.NaiveBayesHMM.release(**kw),
            {"counts": HMM_COUNTS, "epsilon": 1.0, "feature_sizes": [2, 2], "accountant": ACC},
            {
                "counts": hmm_counts,
                "epsilon": positive(),
                "feature_sizes": feature_sizes,
                "epsilon_per_feature": [
                    (label, v if isinstance(v, _With) else _With(v, epsilon=None)) for label, v in eps_per_feature
                ],
                **acc_seed,
            },
            names={"epsilon_per_feature": ("epsilon_per_feature", "epsilon")},
            valid={
                "epsilon_per_feature": [
                    (label, _With(v, epsilon=None))
                    for label, v in (
                        ("tiny (1e-15 each)", [1e-15, 1e-15]),
                        ("tiny (5e-324, 1)", [5e-324, 1.0]),
                        ("subnormal (1e-310, 1)", [1e-310, 1.0]),
                        ("huge (1e300 each)", [1e300, 1e300]),
                        ("float max (max, 1)", [FLOAT_MAX, 1.0]),
                    )
                ]
            },
        ),
        Entry(
            fam,
            "bernstein2018.BinomialBeta.release",
            lambda acc, kw: bb.release(**kw),
            {"x": B3, "epsilon": 1.0, "accountant": ACC},
            {"x": int_data(B3, lo=0, hi=1, ndim=(1, 2)), "epsilon": positive(), **acc_seed},
        ),
        Entry(
            fam,
            "bernstein2018.MultinomialDirichlet.release",
            lambda acc, kw: md.release(**kw),
            {"x": np.array([0, 1, 2]), "epsilon": 1.0, "accountant": ACC},
            {"x": int_data([0, 1, 2], lo=0, hi=2, ndim=(1, 2)), "epsilon": positive(), **acc_seed},
        ),
        Entry(
            fam,
            "bernstein2018.ExponentialGamma.release",
            lambda acc, kw: eg.release(**kw),
            {"x": x_exp, "epsilon": 1.0, "accountant": ACC},
            {"x": real_data(x_exp, ndim=(1, 2), nonnegative=True), "epsilon": positive(), **acc_seed},
        ),
        Entry(
            fam,
            "bernstein2018.ExponentialGamma(bounds=...)",
            lambda acc, kw: B.ExponentialGamma(**kw),
            {"bounds": (0.0, 5.0)},
            {"bounds": BOUNDS + [("negative lower", (-1.0, 5.0))]},
        ),
        Entry(
            fam,
            "bernstein2018.BinomialBeta.release_statistics",
            lambda acc, kw: bb.release_statistics(**kw),
            {"s": 2, "n": 3, "epsilon": 1.0, "accountant": ACC},
            {
                "s": [
                    ("NaN", NAN),
                    ("+inf", INF),
                    ("above n", 4),
                    ("negative", -1),
                    ("non-integer", 1.5),
                    ("sentinel", SENTINEL),
                    ("str", "2"),
                    ("None", None),
                    ("object", _Opaque()),
                    ("complex", 2j),
                    ("3-d", [[[2]]]),
                ],
                "n": ints(1),
                "epsilon": positive(),
                **acc_seed,
            },
        ),
        Entry(
            fam,
            "bernstein2018.MultinomialDirichlet.release_statistics",
            lambda acc, kw: md.release_statistics(**kw),
            {"s": np.array([1, 1, 1]), "n": 3, "epsilon": 1.0, "accountant": ACC},
            {
                "s": [
                    ("NaN", [NAN, 1, 1]),
                    ("+inf", [INF, 1, 1]),
                    ("do not sum to n", [1, 1, 2]),
                    ("negative", [-1, 2, 2]),
                    ("non-integer", [0.5, 1.5, 1]),
                    ("wrong length", [1, 2]),
                    ("str array", np.array(["1", "1", "1"])),
                    ("None", None),
                    ("3-d", [[[1, 1, 1]]]),
                    ("empty", np.zeros(0)),
                ],
                "n": ints(1),
                "epsilon": positive(),
                **acc_seed,
            },
        ),
        Entry(
            fam,
            "bernstein2018.ExponentialGamma.release_statistics",
            lambda acc, kw: eg.release_statistics(**kw),
            {"s": 4.5, "n": 3, "epsilon": 1.0, "accountant": ACC},
            {
                "s": [
                    ("NaN", NAN),
                    ("+inf", INF),
                    ("-inf", -INF),
                    ("negative", -1.0),
                    ("above n*b (sentinel)", SENTINEL),
                    ("str", "4.5"),
                    ("None", None),
                    ("complex", 4.5j),
                    ("3-d", [[[4.5]]]),
                    ("wrong length", [[1.0, 2.0]]),
                ],
                "n": ints(1),
                "epsilon": positive(),
                **acc_seed,
            },
        ),
    ]
    for cls_name, model, y in (
        ("BinomialBeta", bb, np.array([1.7])),
        ("MultinomialDirichlet", md, np.array([1.2, 0.8, 1.1])),
        ("ExponentialGamma", eg, np.array([4.2])),
    ):
        out.append(
            Entry(
                fam,
                f"bernstein2018.{cls_name}.published",
                lambda acc, kw, model=model: model.published(**kw),
                {"y": y, "n": 3, "epsilon": 1.0},
                {
                    "y": real_data(y, ndim=(0, 1, 2), bool_invalid=False)
                    + ([("wrong length", y[:2])] if y.size > 1 else [("wrong width", np.zeros((2, 2)))]),
                    "n": ints(1),
                    "epsilon": positive(),
                },
            )
        )
    x_ldp = np.array([0.5, SENTINEL, -7.0])
    out += [
        Entry(
            fam,
            "kulkarni2022.GaussianLDP.release",
            lambda acc, kw: K.GaussianLDP.release(**kw),
            {"x": x_ldp, "epsilon": 1.0, "accountant": ACC},
            {
                "x": real_data(x_ldp, ndim=(1, 2), bool_invalid=True),
                "epsilon": positive(),
                "bounds": BOUNDS,
                **acc_seed,
            },
        ),
        Entry(
            fam,
            "kulkarni2022.ExponentialLDP.release",
            lambda acc, kw: K.ExponentialLDP.release(**kw),
            {"x": np.abs(x_ldp), "epsilon": 1.0, "accountant": ACC},
            {
                "x": real_data(np.abs(x_ldp), ndim=(1, 2), bool_invalid=True, nonnegative=True),
                "epsilon": positive(),
                "bound": positive(),
                **acc_seed,
            },
        ),
        Entry(
            fam,
            "kulkarni2022.HistogramOUE.release",
            lambda acc, kw: K.HistogramOUE.release(**kw),
            {"x": np.array([0, 2, 1]), "epsilon": 1.0, "d": 3, "accountant": ACC},
            {"x": int_data([0, 2, 1], lo=0, hi=2, ndim=(1, 2)), "epsilon": positive(), "d": ints(2), **acc_seed},
        ),
    ]
    x_kr = real_data(X32, ndim=(2,), bool_invalid=False)
    y_lin = real_data(Y3, ndim=(1,), bool_invalid=False) + [("wrong length", Y3[:2])]
    y_log = int_data(B3, lo=0, hi=1, ndim=(1,)) + [("wrong length", B3[:2])]
    ratio = positive() + [("below 1e-3", 1e-4), ("above 1e3", 1e4)]
    kr = [
        (
            "LinearRegressionSS",
            KR.LinearRegressionSS,
            Y3,
            y_lin,
            {"R_y": positive(), "ratio_xy": ratio, "ratio_yy": ratio},
        ),
        ("LinearRegressionInputs", KR.LinearRegressionInputs, Y3, y_lin, {"R_y": positive(), "c": open_unit()}),
        ("LogisticRegressionSS", KR.LogisticRegressionSS, B3, y_log, {"ratio_t2": ratio}),
        ("LogisticRegressionInputs", KR.LogisticRegressionInputs, B3, y_log, {"c": open_unit()}),
    ]
    for name, cls, y, y_bad, extra in kr:
        out.append(
            Entry(
                fam,
                f"kulkarni2022_regression.{name}.release",
                lambda acc, kw, cls=cls: cls.release(**kw),
                {"x": X32, "y": y, "epsilon": 1.0, "accountant": ACC},
                {
                    "x": x_kr,
                    "y": y_bad,
                    "epsilon": positive(),
                    "delta": delta_values(positive_only=True),
                    "R": positive(),
                    **extra,
                    **acc_seed,
                },
            )
        )
    return out


# ---------------------------------------------------------------------------- models: OPS
def _ops_entries() -> list[Entry]:
    fam = "models.ops"
    sampler = {
        "chains": ints(1),
        "warmup": ints(0),
        "draws": ints(1),
        "max_treedepth": ints(1),
        "adapt_delta": ADAPT_DELTA,
        "thresholds": THRESHOLDS,
        "allow_unconverged": FLAGS,
    }
    bbo = F.BetaBernoulliOPS()
    hmmo = H.NaiveBayesHMMOPS(2)
    hmm_counts = int_data(HMM_COUNTS, lo=0, hi=None, ndim=(3,)) + [("features disagree", _put(HMM_COUNTS, 2, 0))]
    out = [
        Entry(
            fam,
            "foulds2016.BetaBernoulliOPS.sample_one",
            lambda acc, kw: bbo.sample_one(**kw),
            {"x": B3, "epsilon": 1.0, "accountant": ACC},
            {
                "x": int_data(B3, lo=0, hi=1, ndim=(1,)) + [("2-d (use sample_batch)", B3[None, :])],
                "epsilon": positive(),
                "accountant": ACCOUNTANTS,
                "seed": SEEDS,
                **sampler,
            },
            expect="stan",
        ),
        Entry(
            fam,
            "foulds2016.BetaBernoulliOPS.sample_batch",
            lambda acc, kw: bbo.sample_batch(**kw),
            {"x": B3[None, :], "epsilon": 1.0},
            {"x": int_data(B3[None, :], lo=0, hi=1, ndim=(1, 2)), "epsilon": positive(), "seed": SEEDS},
            expect="stan",
        ),
        Entry(
            fam,
            "foulds2016.BetaBernoulliOPS(a0=...)",
            lambda acc, kw: F.BetaBernoulliOPS(**kw),
            {"a0": 0.2},
            {"a0": open_unit() + [("0.5", 0.5)]},
        ),
        Entry(
            fam,
            "foulds2016_hmm.NaiveBayesHMMOPS.sample_one",
            lambda acc, kw: hmmo.sample_one(**kw),
            {"counts": HMM_COUNTS, "epsilon": 1.0, "feature_sizes": [2, 2], "accountant": ACC},
            {
                "counts": hmm_counts,
                "epsilon": positive(),
                "feature_sizes": [
                    ("sum mismatch", [2, 3]),
                    ("size 1", [1, 3]),
                    ("str", "22"),
                    ("non-integer", [2.5, 2.5]),
                    ("NaN entry", [NAN, 2]),
                    ("None", None),
                ],
                "heldout": [
                    ("wrong shape", np.zeros((3, 2), int)),
                    ("NaN", _put(np.zeros((2, 3)), NAN)),
                    ("value 2", np.array([[0, 2, 0], [0, 0, 0]])),
                    ("all held out", np.ones((2, 3), int)),
                    ("str", "all"),
                ],
                "init": [("unknown str", "bogus"), ("int", 5), ("wrong count", [{}]), ("not mappings", [1, 2, 3, 4])],
                "accountant": ACCOUNTANTS,
                "seed": SEEDS,
                **sampler,
            },
            expect="stan",
        ),
        Entry(
            fam,
            "foulds2016_hmm.NaiveBayesHMMOPS(multiplier=...)",
            lambda acc, kw: H.NaiveBayesHMMOPS(2, **kw),
            {"multiplier": 100.0},
            {"multiplier": positive() + [("1", 1.0), ("0.5", 0.5)]},
        ),
        Entry(
            fam,
            "foulds2016_hmm.NaiveBayesHMMOPS(a0=...).sample_one",
            lambda acc, kw: H.NaiveBayesHMMOPS(2, a0=kw.pop("a0")).sample_one(**kw),
            {"a0": [0.1, 0.1], "counts": HMM_COUNTS, "epsilon": 1.0, "feature_sizes": [2, 2], "accountant": ACC},
            {
                "a0": [
                    ("NaN entry", [NAN, 0.1]),
                    ("+inf entry", [INF, 0.1]),
                    ("zero entry", [0.0, 0.1]),
                    ("negative entry", [-0.1, 0.1]),
                    ("entry >= 1/K", [0.6, 0.1]),
                    ("wrong length", [0.1]),
                    ("2-d", [[0.1, 0.1]]),
                    ("str", "abc"),
                    ("str entries", ["a", "b"]),
                    ("object", _Opaque()),
                ]
            },
            expect="stan",
        ),
    ]
    Xs = np.array([[0.3, SENTINEL], [-0.2, 0.5], [0.1, -0.6]])
    for name, model, y, eps in (
        ("LogisticRegressionBetaD", J.LogisticRegressionBetaD(), B3, 5.0),
        ("NNClassifierBetaD", J.NNClassifierBetaD(), B3, 5.0),
        ("LinearRegressionBetaD", J.LinearRegressionBetaD(), np.array([0.1, SENTINEL, -0.3]), 40.0),
        ("NNRegressionBetaD", J.NNRegressionBetaD(), np.array([0.1, SENTINEL, -0.3]), 40.0),
    ):
        classification = y is B3
        y_bad = (int_data(B3, lo=0, hi=1, ndim=(1,)) if classification else real_data(y, ndim=(1,))) + [
            ("wrong length", y[:2])
        ]
        eps_bad = positive() + ([] if classification else [("below the reachable minimum", 1.0)])
        X_bad = real_data(Xs, ndim=(2,)) + [("no columns", np.zeros((3, 0)))]
        out.append(
            Entry(
                fam,
                f"jewson2023.{name}.sample_one",
                lambda acc, kw, model=model: model.sample_one(**kw),
                {"X": Xs, "y": y, "epsilon": eps, "accountant": ACC},
                {
                    "X": X_bad,
                    "y": y_bad,
                    "epsilon": eps_bad,
                    "accountant": ACCOUNTANTS,
                    "seed": SEEDS,
                    **sampler,
                    "chains": ints(2),
                },
                expect="stan",
            )
        )
        out.append(
            Entry(
                fam,
                f"jewson2023.{name}.try_sample_one",
                lambda acc, kw, model=model: model.try_sample_one(**kw),
                {"X": Xs, "y": y, "epsilon": eps},
                {"X": X_bad, "y": y_bad, "epsilon": eps_bad, "seed": SEEDS},
                expect="stan",
            )
        )
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
        (
            "foulds2016_hmm.NaiveBayesHMM",
            H.NaiveBayesHMM(2),
            lambda: H.NaiveBayesHMM.release(HMM_COUNTS, epsilon=1.0, feature_sizes=[2, 2]),
            True,
        ),
        ("bernstein2018.BinomialBeta", B.BinomialBeta(), lambda: B.BinomialBeta().release(B3, epsilon=1.0), False),
        (
            "bernstein2018.BinomialBetaExact",
            B.BinomialBetaExact(),
            lambda: B.BinomialBeta().release(B3, epsilon=1.0),
            False,
        ),
        (
            "bernstein2018.MultinomialDirichlet",
            B.MultinomialDirichlet(),
            lambda: B.MultinomialDirichlet().release(np.array([0, 1, 2]), epsilon=1.0),
            True,
        ),
        (
            "bernstein2018.ExponentialGamma",
            B.ExponentialGamma(bounds=(0.0, 5.0)),
            lambda: B.ExponentialGamma(bounds=(0.0, 5.0)).release(np.array([0.5, 1.0, 2.0]), epsilon=1.0),
            False,
        ),
        (
            "kulkarni2022.GaussianLDP",
            K.GaussianLDP(),
            lambda: K.GaussianLDP.release(np.array([0.5, 1.0, -2.0]), epsilon=1.0),
            False,
        ),
        (
            "kulkarni2022.ExponentialLDP",
            K.ExponentialLDP(),
            lambda: K.ExponentialLDP.release(np.array([0.5, 1.0, 2.0]), epsilon=1.0),
            False,
        ),
        (
            "kulkarni2022.HistogramOUE",
            K.HistogramOUE(),
            lambda: K.HistogramOUE.release(np.array([0, 2, 1]), epsilon=1.0, d=3),
            True,
        ),
        (
            "kulkarni2022_regression.LinearRegressionSS",
            KR.LinearRegressionSS(),
            lambda: KR.LinearRegressionSS.release(X32, Y3, epsilon=1.0),
            True,
        ),
        (
            "kulkarni2022_regression.LinearRegressionInputs",
            KR.LinearRegressionInputs(),
            lambda: KR.LinearRegressionInputs.release(X32, Y3, epsilon=1.0),
            True,
        ),
        (
            "kulkarni2022_regression.LogisticRegressionSS",
            KR.LogisticRegressionSS(),
            lambda: KR.LogisticRegressionSS.release(X32, B3, epsilon=1.0),
            True,
        ),
        (
            "kulkarni2022_regression.LogisticRegressionInputs",
            KR.LogisticRegressionInputs(),
            lambda: KR.LogisticRegressionInputs.release(X32, B3, epsilon=1.0),
            True,
        ),
    ]
    out = []
    for name, model, make, fixed_width in specs:
        rel = make()
        v, rec = np.array(rel.values), rel.record
        other = "gaussian" if rec.mechanism == "laplace" else "laplace"
        hostile = [
            ("dict (to_dict)", rel.to_dict()),
            ("None", None),
            ("ndarray", v.copy()),
            ("record only", rec),
            ("another mechanism's release", foreign),
            (
                "record: another mechanism",
                _Lazy(
                    lambda v=v, rec=rec, other=other: Release(
                        values=v, record=dataclasses.replace(rec, mechanism=other)
                    )
                ),
            ),
            ("extra leading axes", _Lazy(lambda v=v, rec=rec: Release(values=v[None, None], record=rec))),
            ("empty values", _Lazy(lambda v=v, rec=rec: Release(values=v[:0], record=rec))),
            (
                "NaN values (Release constructor)",
                _Lazy(lambda v=v, rec=rec: Release(values=np.full(v.shape, NAN), record=rec)),
            ),
            (
                "NaN values (unpickled, no __post_init__)",
                _Lazy(lambda v=v, rec=rec: _forge(np.full(v.shape, NAN), rec)),
            ),
            (
                "+inf values (unpickled, no __post_init__)",
                _Lazy(lambda v=v, rec=rec: _forge(np.full(v.shape, INF), rec)),
            ),
            ("string values (unpickled, no __post_init__)", _Lazy(lambda v=v, rec=rec: _forge(v.astype(str), rec))),
        ]
        if fixed_width:
            hostile.append(("last axis one short", _Lazy(lambda v=v, rec=rec: Release(values=v[..., :-1], record=rec))))
        if v.ndim >= 1:  # issue 53, item 7: a release whose values do not match its record reaches no Stan
            hostile.append(
                (
                    "one value (row) more than its record says",
                    _Lazy(lambda v=v, rec=rec: Release(values=np.concatenate([v, v[:1]], axis=0), record=rec)),
                )
            )
        aliases = ("release", "values") + (("reports",) if name.startswith("kulkarni2022.") else ())
        out.append(
            Entry(
                fam,
                f"{name}.fit",
                lambda acc, kw, model=model: model.fit(**kw),
                {"release": rel},
                {"release": hostile},
                names={"release": aliases},
                expect="stan",
            )
        )
    return out


# ---------------------------------------------------------------------------- files
def _posterior(privacy: Any) -> Any:
    """A small :class:`~pystanprivacy.sampling.posterior.Posterior` made without Stan."""
    from pystanprivacy.sampling.backends.base import RawFit, SamplerSettings
    from pystanprivacy.sampling.posterior import Posterior

    rng = np.random.default_rng(0)
    raw = RawFit(
        variables={"theta": rng.uniform(size=(2, 5))},
        sampler={"lp__": rng.normal(size=(2, 5)), "divergent__": np.zeros((2, 5))},
    )
    post = Posterior(
        raw,
        model="foulds2016/beta_bernoulli",
        backend="pystan",
        settings=SamplerSettings(chains=2, warmup=5, draws=5, seed=0),
        elapsed=1.0,
    )
    post.privacy = privacy
    return post


def _write(path: Any, data: bytes) -> str:
    Path(path).write_bytes(data)
    return str(path)


def _file_corpus(tmp: Path, good: Path, name: str) -> list[tuple[str, Any]]:
    """Corrupted and non-regular variants of the regular file ``good`` (written under
    ``tmp/name``): truncated, zero bytes, random bytes holding the sentinel, a directory, a
    FIFO, a FIFO behind a symbolic link, a character device, a dangling link."""
    import os

    folder = tmp / name
    folder.mkdir()
    data = good.read_bytes()
    rng = np.random.default_rng(1)
    garbage = rng.integers(0, 256, size=4096, dtype=np.uint8).tobytes() + f"{SENTINEL}\n".encode()
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    (folder / "fifo-link").symlink_to(fifo)
    (folder / "dangling").symlink_to(folder / "does-not-exist")
    (folder / "directory").mkdir()
    return [
        ("truncated to half", _write(folder / "half", data[: len(data) // 2])),
        ("truncated to 100 bytes", _write(folder / "head", data[:100])),
        ("zero bytes", _write(folder / "empty", b"")),
        ("random bytes (holding the sentinel)", _write(folder / "random", garbage)),
        ("text holding the sentinel", _write(folder / "text", f"x,y\n{SENTINEL},1\n".encode())),
        ("a directory", str(folder / "directory")),
        ("a FIFO", str(fifo)),
        ("a symbolic link to a FIFO", str(folder / "fifo-link")),
        ("a character device (/dev/null)", "/dev/null"),
        ("a dangling symbolic link", str(folder / "dangling")),
    ]


def _file_entries(tmp: Path) -> list[Entry]:
    """``Posterior.load`` on corrupted, forged and non-regular files (a FIFO that blocks is
    released after a time limit and counts as crashed)."""
    from pystanprivacy.sampling.posterior import Posterior

    rec = PrivacyRecord(
        mechanism="laplace", epsilon=1.0, sensitivity=1.0, sensitivity_norm="l1", scale=1.0, bounds=(0.0, 1.0), n=3
    ).to_dict()
    good = _posterior(rec).save(tmp / "good.nc")

    def saved(label: str, privacy: Any) -> tuple[str, str]:
        return label, str(_posterior(privacy).save(tmp / f"forged-{len(label)}-{abs(hash(label)) % 10**8}.nc"))

    def with_attrs(label: str, **attrs: Any) -> tuple[str, str]:
        post = _posterior(rec)
        idata = post.idata
        for k, v in attrs.items():
            if v is _DROP:
                idata.attrs.pop(k, None)
            else:
                idata.attrs[k] = v
        path = tmp / f"attrs-{abs(hash(label)) % 10**8}.nc"
        idata.to_netcdf(str(path))
        return label, str(path)

    def hdf5_without_groups() -> tuple[str, str]:
        import h5py

        path = tmp / "plain.h5"
        with h5py.File(path, "w") as f:
            f["x"] = np.arange(3.0)
        return "valid HDF5 without the posterior group", str(path)

    forged = [
        saved("record with epsilon -5", {**rec, "epsilon": -5.0}),
        saved("record with an unknown key", {**rec, "colour": "red"}),
        saved("record with NaN epsilon", {**rec, "epsilon": NAN}),
        saved("record that is a number", 5),
        saved("record naming an unknown mechanism", {**rec, "mechanism": ""}),
        with_attrs("privacy attribute that is not JSON", privacy="{not json"),
        with_attrs("no 'chains' attribute", chains=_DROP),
        with_attrs("'chains' that is not a number", chains="many"),
        with_attrs("no 'privacy' attribute", privacy=_DROP),
        hdf5_without_groups(),
    ]
    path_cases = _file_corpus(tmp, Path(good), "posterior") + forged + [("missing", str(tmp / "no-such-file.nc"))]
    types = [("None", None), ("int", 3), ("bytes", b"good.nc"), ("object", _Opaque()), ("empty str", "")]
    return [
        Entry(
            "files",
            "sampling.Posterior.load",
            lambda acc, kw: Posterior.load(**kw),
            {"path": str(good)},
            {"path": path_cases + types},
            names={"path": ("path",)},
        )
    ]


# ---------------------------------------------------------------------------- the command line
_WORK = {
    "pystanprivacy.run.runner": ("make_executor", "run_tasks", "write_results"),
    "pystanprivacy.models.audits": ("run_audits",),
}


@contextlib.contextmanager
def work_trap():
    """Replace the work of the command line -- the runner's ``make_executor``, ``run_tasks``
    and ``write_results`` and the audit's ``run_audits`` -- by a function that raises
    :class:`_WouldDoWork`, in the module that defines it and in every ``pystanprivacy`` module
    that imported it (also those imported while the trap is set). Restored on exit."""
    import importlib

    originals: dict[int, Any] = {}
    for module_name, names in _WORK.items():
        module = importlib.import_module(module_name)
        for name in names:
            original = getattr(module, name)

            def trap(*args: Any, _name: str = name, **kwargs: Any) -> Any:
                raise _WouldDoWork(f"{_name} would have run")

            originals[id(trap)] = (trap, original)
    by_original = {id(orig): trap for trap, orig in originals.values()}

    def swap(mapping: dict[int, Any]) -> None:
        for module_name, module in list(sys.modules.items()):
            if not module_name.startswith("pystanprivacy") or module is None:
                continue
            for attr, value in list(vars(module).items()):
                if id(value) in mapping and callable(value):
                    setattr(module, attr, mapping[id(value)])

    swap(by_original)
    try:
        yield
    finally:
        swap({tid: orig for tid, (trap, orig) in originals.items()})


class _CliExit(Exception):
    """The command line ended with an exit code other than 2, or with a traceback."""


def _cli(argv: Sequence[str]) -> Any:
    """Run ``pystanprivacy ARGV`` in this process (stdout and stderr captured). A clear
    refusal -- exit code 2 (argparse's), no traceback -- comes back as a ``ValueError``
    holding what was printed to stderr, so that :func:`classify` can judge its message; any
    other exit code, or an exception escaping ``main`` (a traceback), as :class:`_CliExit`."""
    import io

    from pystanprivacy import cli

    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = cli.main(list(argv))
    except SystemExit as exc:
        text = err.getvalue().strip()
        if "Traceback" in text:
            raise _CliExit(f"printed a traceback: {text[-300:]}") from None
        if exc.code == 2:
            raise ValueError(text.splitlines()[-1] if text else "(nothing on stderr)") from None
        raise _CliExit(f"exit code {exc.code!r}: {text[-300:]}") from None
    except (_WouldRunStan, _WouldDoWork, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - escaping main is a traceback for the user
        raise _CliExit(f"traceback: {type(exc).__name__}: {exc}") from None
    return code


def _cli_entry(
    family: str, name: str, command: list[str], options: dict[str, Any], hostile: dict[str, list[tuple[str, Any]]]
) -> Entry:
    """An entry point of the command line: ``command``, the positional ``options["PAPER"]``
    (if given), then the other ``options`` (``--opt value``; ``True`` for a flag), one option
    at a time replaced by a hostile value."""

    def call(acc: Any, kw: dict[str, Any]) -> Any:
        argv = list(command) + ([kw["PAPER"]] if "PAPER" in kw else [])
        for opt, value in kw.items():
            if opt == "PAPER":
                continue
            if value is True:
                argv.append(opt)
            elif value is not None:
                argv += [opt, str(value)]
        return _cli(argv)

    return Entry(family, name, call, dict(options), hostile, names={k: (k,) for k in hostile}, expect="work")


def _out_paths(tmp: Path, name: str) -> list[tuple[str, Any]]:
    """Output folders that cannot be written: an existing file (also through a link), a path
    under a file / a FIFO / a dangling link / /dev/null, a name too long for the file system,
    a FIFO, a character device, a dangling link, the empty string. (A NUL byte cannot reach a
    real command line, so it is not tried.)"""
    import os

    folder = tmp / name
    folder.mkdir()
    existing = _write(folder / "existing-file", b"keep me\n")
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    (folder / "dangling").symlink_to(folder / "nowhere")
    (folder / "file-link").symlink_to(existing)
    return [
        ("an existing file", existing),
        ("a path under a file", f"{existing}/out"),
        ("a name longer than the file system allows", str(folder / ("x" * 300))),
        ("a path under a FIFO", str(fifo / "out")),
        ("a path under a dangling symbolic link", str(folder / "dangling" / "out")),
        ("a link to a file", str(folder / "file-link")),
        ("a FIFO", str(fifo)),
        ("a character device (/dev/null)", "/dev/null"),
        ("a path under /dev/null", "/dev/null/out"),
        ("a dangling symbolic link", str(folder / "dangling")),
        ("the empty string", ""),
    ]


def _cli_entries(tmp: Path) -> list[Entry]:
    """``pystanprivacy reproduce`` and ``audit`` with bad paths: each must end with exit code
    2 and one line naming the option, no traceback, before any work starts (the runner and
    the audits are trapped by :func:`work_trap`; Stan by :func:`stan_trap`)."""
    repo = Path(__file__).resolve().parents[2]
    warlogs = repo / "tests" / "data" / "warlogs_iraq_small.csv"
    kosarak = Path(_write(tmp / "kosarak.dat", b"1 2 3\n2 3\n4\n"))
    # a war-logs CSV cut in half is a smaller data set (its last, partial row has empty cells), not an invalid one
    data_foulds = [c for c in _file_corpus(tmp, warlogs, "warlogs") if c[0] != "truncated to half"] + [
        ("missing", str(tmp / "no-such-file.csv")),
        ("a CSV of another schema", _write(tmp / "other.csv", b"a,b,c\n1,2,3\n")),
    ]
    data_kosarak = [
        (label, v)
        for label, v in _file_corpus(tmp, kosarak, "kosarak")
        if label in ("random bytes (holding the sentinel)", "a FIFO", "zero bytes", "text holding the sentinel")
    ]
    uci_bad = tmp / "uci-bad"
    uci_bad.mkdir()
    _write(uci_bad / "adult.data", np.random.default_rng(2).integers(0, 256, 2048, dtype=np.uint8).tobytes())
    import os

    os.mkfifo(tmp / "uci-fifo")
    data_uci = [
        ("a folder whose adult.data is random bytes", str(uci_bad)),
        ("a FIFO", str(tmp / "uci-fifo")),
        ("a file, not a folder", str(warlogs)),
    ]
    kul = {"PAPER": "kulkarni2022", "--parts": "kosarak", "--out": str(tmp / "out-kulkarni")}
    jew = {"PAPER": "jewson2023", "--parts": "logistic", "--out": str(tmp / "out-jewson")}
    data = (
        [(f"{label} (foulds2016)", v) for label, v in data_foulds]
        + [(f"{label} (kulkarni2022)", _With(v, **kul)) for label, v in data_kosarak]
        + [(f"{label} (jewson2023)", _With(v, **jew)) for label, v in data_uci]
    )
    quick = {"--quick": True, "--no-progress": True}
    entries = [
        _cli_entry(
            "cli",
            "cli: reproduce --data",
            ["reproduce"],
            {
                "PAPER": "foulds2016",
                **quick,
                "--parts": "hmm",
                "--out": str(tmp / "out-foulds"),
                "--data": str(warlogs),
            },
            {"--data": data},
        ),
        _cli_entry(
            "cli",
            "cli: reproduce --out",
            ["reproduce"],
            {"PAPER": "foulds2016", **quick, "--parts": "beta_bernoulli", "--out": str(tmp / "out-reproduce")},
            {"--out": _out_paths(tmp, "reproduce-out")},
        ),
        _cli_entry(
            "cli",
            "cli: audit --out",
            ["audit"],
            {"--quick": True, "--mechanism": "laplace", "--out": str(tmp / "out-audit")},
            {"--out": _out_paths(tmp, "audit-out")},
        ),
    ]
    return entries


# ============================================================================ census
def _entries() -> list[Entry]:
    entries = (
        _add_pairs(
            _add_extremes(
                _mechanism_entries() + _ldp_entries() + _privacy_entries() + _model_release_entries() + _ops_entries()
            )
        )
        + _fit_entries()
    )
    return entries


def census() -> list[Row]:
    """Run every hostile case (deterministic order) and return one :class:`Row` per case
    (plus a crashed ``(valid call)`` row for any entry point whose valid call misbehaves)."""
    import tempfile

    saved_warned = getattr(P, "_SEEDED_WARNED", None)
    rows: list[Row] = []
    try:
        with stan_trap():
            for entry in _entries():
                rows.extend(run_entry(entry))
            with tempfile.TemporaryDirectory(prefix="hostile-census-") as tmp, work_trap():
                for entry in _file_entries(Path(tmp)) + _cli_entries(Path(tmp)):
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
    """The Markdown table, the totals line and the list of cases that failed."""
    per = summarise(rows)
    lines = ["| entry point | tried | " + " | ".join(OUTCOMES) + " |", "|---|---:|" + "---:|" * len(OUTCOMES)]
    for entry, c in per.items():
        lines.append(f"| `{entry}` | {c['tried']} | " + " | ".join(str(c[o]) for o in OUTCOMES) + " |")
    lines.append("")
    lines.append(totals(rows))
    bad = [r for r in rows if r.outcome in FAILURES]
    if bad:
        lines.append("")
        lines.append(f"Cases that failed ({len(bad)}):")
        lines.append("")
        for r in bad:
            lines.append(f"- `{r.entry}` {r.argument} = {r.label}: **{r.outcome}**: {r.detail}")
    return "\n".join(lines)


def totals(rows: Sequence[Row]) -> str:
    """The totals line (SECURITY.md quotes it; its test checks the numbers)."""
    tot = Counter(r.outcome for r in rows)
    return (
        f"**{len(rows)} cases tried over {len({r.entry for r in rows})} entry points: {tot[REJECTED]} rejected "
        f"clearly, {tot[SOUND]} handled soundly, {tot[ACCEPTED]} accepted silently, {tot[CRASHED]} crashed "
        f"unclearly, {tot[CHARGED]} charged then failed, {tot[TOLD_APART]} told apart.**"
    )


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    argparse.ArgumentParser(
        description="Hostile-input census of pystanprivacy's public entry points (no Stan run): prints a "
        "Markdown table, the totals and every case that failed; exit code 1 if any case was accepted "
        "silently, crashed unclearly, charged then failed or was told apart."
    ).parse_args(argv)
    rows = census()
    print(table(rows))
    return 1 if any(r.outcome in FAILURES for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
