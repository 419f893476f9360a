"""cmdstanpy backend: used when a CmdStan installation is found (``CMDSTAN`` or ``~/.cmdstan``).

Only the documented cmdstanpy API is used (imported through
:func:`~pystanprivacy.sampling.backends.workdirs.import_cmdstanpy`, so that the temporary folder it makes
at import time is private and removed even after the process is killed). CmdStan is never downloaded: if no installation
is found the backend reports itself unavailable. Every file a run writes (the data JSON,
the per-chain CSV files, console output) goes into the private working directory of the fit,
which the caller removes when the fit ends; draws are read into memory before that.

What this backend guarantees, beyond that:

* **CmdStan 2.27 or newer** (:data:`MIN_CMDSTAN`): an older installation makes the backend
  unavailable (``auto`` then picks pystan), because the two features below need it.
* **The draws are the doubles Stan made.** CmdStan writes the draws to CSV with
  ``sig_figs=18`` (:data:`SIG_FIGS`; the argument exists since CmdStan 2.25), enough for every
  double to be read back exactly (17 significant digits suffice), so both backends return the
  same numbers for the same seed (the 15 digits used before lost the last bits of some draws).
  A fit's CSV files are a little larger (about 20 bytes a value instead of 16).
* **Every declared output comes back**, with a zero-length dimension too. CmdStan's CSV has no
  column for an output with no elements, so cmdstanpy drops it; the program's outputs are
  listed by ``stanc --info`` (``CmdStanModel.src_info()``, which gives names and numbers of
  dimensions, not sizes), and the shape of each missing one comes from its declared sizes,
  evaluated on the fit's data (:func:`zero_size_shape`): int literals, int data, arithmetic and
  ``size``/``num_elements`` of data. Where a size cannot be evaluated so (it uses transformed
  data, say), a single unknown size is the zero one; otherwise the fit fails with a message
  naming the output, rather than returning a wrong shape.
* **``log_density`` of a program without free parameters** (total size 0) is evaluated, as
  pystan does, although CmdStan's ``log_prob`` method refuses such a program
  (:data:`NO_PARAMETERS`): on a copy with one unused, unconstrained parameter at 0
  (:func:`padded_program`), compiled once beside the model's executable.
* **At most** :func:`~.base.parallel_chains` **chain processes at once**: it is cmdstanpy's
  ``parallel_chains``, the size of the thread pool in which cmdstanpy starts one CmdStan process
  per chain (or, for an executable built with ``STAN_THREADS``, the number of threads of a
  single process), so a pool or Dask worker runs its share of the CPUs, not all of them.
* **No chain outlives its fit** (Linux, which has ``/proc``; see :mod:`.chain_processes`).
  A chain is found by its command line, which names files in the fit's private folder.
  :meth:`CmdStanPyBackend.stop_chains` (called on SIGTERM or Ctrl-C in the main thread) and any
  exception out of cmdstanpy kill the fit's running chains with SIGKILL, and keep killing
  chains of that fit that cmdstanpy's queue still starts, until the private folder is gone
  (after which cmdstanpy cannot start one: it opens a console file there first) and
  :data:`REAP_LINGER_S` more. A watchdog process per Python process (:func:`_ensure_watchdog`)
  kills every remaining chain of that process's fits within about
  :data:`~.chain_processes.WATCH_PERIOD` seconds of its death, by any signal, SIGKILL included,
  and of its normal exit once a fit was stopped (a queued chain can start during shutdown).
  Not covered: a watchdog killed on its own (by SIGKILL), a fit run elsewhere than Linux.

References
----------
CmdStan User's Guide, "Extracting log probabilities and gradients for diagnostics" (the
``log_prob`` method, CmdStan 2.31) and CmdStan's ``src/cmdstan/command_helper.hpp``
(``get_constrained_param_names``: the refusal of a program without parameters). CmdStan User's
Guide, the ``output sig_figs`` argument (added in CmdStan 2.25, stan-dev/cmdstan
pull request 922; cmdstanpy drops it with a warning for an older CmdStan), and ``stanc --info``.
cmdstanpy API reference: ``CmdStanModel.sample``
(``parallel_chains``, ``sig_figs``), ``CmdStanModel.src_info``, ``CmdStanMCMC.stan_variable``,
``InferenceMetadata.stan_vars``. stanc3 ``src/frontend/Info.mli``: ``--info`` reports each
variable's base type and number of dimensions only.
"""

from __future__ import annotations

import ast
import atexit
import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import chain_processes
from .base import SAMPLER_COLUMNS, Backend, RawFit, SamplerSettings, parallel_chains
from .workdirs import import_cmdstanpy, workdir_prefix

#: the oldest CmdStan this backend runs on: ``stanc --info`` (``CmdStanModel.src_info``) needs
#: 2.27, ``sig_figs`` 2.25
MIN_CMDSTAN = (2, 27)
#: significant digits of the draws in CmdStan's CSV (its maximum): every double reads back exactly
SIG_FIGS = 18
#: seconds the reaper of a stopped fit goes on killing its chains after its folder is gone
REAP_LINGER_S = 0.5
#: the longest a reaper runs (its fit's folder is normally removed at once)
REAP_MAX_S = 60.0
#: the blocks whose variables are a fit's outputs, in the order Stan writes them
OUTPUT_BLOCKS = ("parameters", "transformed parameters", "generated quantities")


_LOGGING_SET: list[bool] = []


def _cmdstanpy():
    """cmdstanpy, imported privately (:func:`import_cmdstanpy`), with its logger at WARNING.

    cmdstanpy configures its logger on the first call of ``cmdstanpy.utils.get_logger`` (level
    DEBUG, an INFO handler on stderr), which would undo a level set before: that call is made
    here first, so the level set after it stays and no INFO line per fit reaches stderr."""
    cmdstanpy = import_cmdstanpy()
    if not _LOGGING_SET:
        cmdstanpy.utils.get_logger().setLevel(logging.WARNING)
        _LOGGING_SET.append(True)
    return cmdstanpy


def _cmdstan_version() -> str:
    """The installed CmdStan's version, ``major.minor`` (``cmdstanpy.utils.cmdstan_version``),
    or ``"unknown"``."""
    version = _cmdstanpy().utils.cmdstan_version()
    return ".".join(map(str, version)) if version else "unknown"


def _cmdstan_path() -> str | None:
    """The CmdStan installation cmdstanpy would use, or ``None``; never installs one."""
    try:
        cmdstanpy = _cmdstanpy()
    except ImportError:
        return None
    try:
        return cmdstanpy.cmdstan_path()
    except (ValueError, RuntimeError):
        return None


# --------------------------------------------------------------------------- declared shapes
_TOKEN = re.compile(
    r"""
    (?P<skip>\s+|//[^\n]*|/\*.*?\*/|\#[^\n]*)
  | (?P<string>"[^"\n]*")
  | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?i?)
  | (?P<name>[A-Za-z][A-Za-z0-9_]*)
  | (?P<op>%/%|\.\*|\./|<-|\+=|-=|\*=|/=|\.\*=|\./=|==|!=|<=|>=|&&|\|\||[-+*/%\\^'!<>=?:,;()\[\]{}|.~])
""",
    re.VERBOSE | re.DOTALL,
)
_VECTORS = {"vector", "row_vector", "simplex", "unit_vector", "sum_to_zero_vector", "ordered", "positive_ordered"}
_MATRICES = {"matrix", "column_stochastic_matrix", "row_stochastic_matrix", "sum_to_zero_matrix"}
_SQUARE = {"cov_matrix", "corr_matrix", "cholesky_factor_corr"}
#: types whose zero-size outputs this backend does not reshape (CmdStan writes a complex number
#: as two columns; a tuple as one column per element)
_UNSUPPORTED = {"complex", "complex_vector", "complex_row_vector", "complex_matrix", "tuple"}
_TYPES = {"int", "real", "array", "cholesky_factor_cov", *_VECTORS, *_MATRICES, *_SQUARE, *_UNSUPPORTED}
_OPEN, _CLOSE = "([{", ")]}"


def _tokens(program: str) -> list[str]:
    out, pos = [], 0
    while pos < len(program):
        m = _TOKEN.match(program, pos)
        if m is None:
            raise ValueError(f"cannot read the Stan program at character {pos}: {program[pos : pos + 20]!r}")
        if m.lastgroup != "skip":
            out.append(m.group())
        pos = m.end()
    return out


def _blocks(tokens: list[str]) -> dict[str, list[str]]:
    """The token lists of the program's top-level blocks, by block name."""
    blocks, words, depth, start = {}, [], 0, 0
    for i, t in enumerate(tokens):
        if depth == 0 and t == "{":
            name, depth, start = " ".join(words), 1, i + 1
            continue
        if depth == 0:
            words.append(t)
            continue
        depth += t == "{"
        depth -= t == "}"
        if depth == 0:
            blocks[name] = tokens[start:i]
            words = []
    return blocks


def _balanced_until(tokens: list[str], i: int, stops: set[str]) -> tuple[list[str], int]:
    """The tokens from ``i`` up to the first of ``stops`` outside brackets, and its index."""
    depth, start = 0, i
    while i < len(tokens):
        t = tokens[i]
        if depth == 0 and t in stops:
            return tokens[start:i], i
        depth += (t in _OPEN) - (t in _CLOSE)
        i += 1
    raise ValueError("unexpected end of a declaration")


def _size_list(tokens: list[str], i: int) -> tuple[list[list[str]], int]:
    """``[e1, e2, ...]`` at ``i``: the expressions and the index after ``]``."""
    if tokens[i] != "[":
        raise ValueError(f"expected '[' in a declaration, found {tokens[i]!r}")
    sizes, i = [], i + 1
    while True:
        expr, i = _balanced_until(tokens, i, {",", "]"})
        sizes.append(expr)
        if tokens[i] == "]":
            return sizes, i + 1
        i += 1


def _declared_type(tokens: list[str], i: int) -> tuple[str, list[list[str]], int]:
    """The base type and the size expressions (array sizes first) of the type at ``i``."""
    sizes: list[list[str]] = []
    if tokens[i] == "array":
        sizes, i = _size_list(tokens, i + 1)
    base, i = tokens[i], i + 1
    if base == "tuple":
        _, i = _balanced_until(tokens, i + 1, {")"})
        return base, sizes, i + 1
    if i < len(tokens) and tokens[i] == "<":  # bounds, offset/multiplier: skip to the closing '>'
        _, i = _balanced_until(tokens, i + 1, {">"})
        i += 1
    if base in _VECTORS | _MATRICES | _SQUARE | {
        "cholesky_factor_cov",
        "complex_vector",
        "complex_row_vector",
        "complex_matrix",
    }:
        own, i = _size_list(tokens, i)
        if base in _SQUARE or (base == "cholesky_factor_cov" and len(own) == 1):
            own = own * 2
        sizes += own
    return base, sizes, i


def program_outputs(program: str) -> dict[str, tuple[str, list[str]]]:
    """The top-level variables of the program's parameters, transformed parameters and
    generated quantities blocks, in the order Stan writes them:
    ``name -> (base type, [size expression, ...])``, one expression per dimension (array
    sizes first), each the declaration's own text (e.g. ``"N_te"``, ``"2"``).

    Declarations are read at the top level of each block (Stan allows them only in statement
    lists, so a top-level one starts after ``;``, ``}`` or the block's ``{``); the old array
    syntax (``real x[N]``) is read too.

    Raises
    ------
    ValueError
        The program text cannot be tokenised or a declaration cannot be read.

    References
    ----------
    Stan Reference Manual, "Data Types and Declarations" (the sized types and the ``array``
    syntax) and "Program Blocks".
    """
    blocks = _blocks(_tokens(program))
    out: dict[str, tuple[str, list[str]]] = {}
    for block in OUTPUT_BLOCKS:
        tokens, i, depth, at_start = blocks.get(block, []), 0, 0, True
        while i < len(tokens):
            t = tokens[i]
            if depth == 0 and at_start and t in _TYPES:
                base, sizes, i = _declared_type(tokens, i)
                while True:  # one or more declarators: name [old array sizes] [= expression]
                    name, i = tokens[i], i + 1
                    old: list[list[str]] = []
                    if tokens[i] == "[":
                        old, i = _size_list(tokens, i)
                    out[name] = (base, [" ".join(e) for e in old + sizes])
                    _, i = _balanced_until(tokens, i, {",", ";"})
                    i += 1
                    if tokens[i - 1] == ";":
                        break
                continue
            depth += (t in _OPEN) - (t in _CLOSE)
            at_start = depth == 0 and t in (";", "}")
            i += 1
    return out


# --------------------------------------------------------------------------- no free parameters
#: CmdStan's refusal to run ``log_prob`` (with ``constrained_params``) on a program whose free
#: parameters have total size 0: ``get_constrained_param_names`` in CmdStan's
#: ``src/cmdstan/command_helper.hpp`` throws "Model <name> has no parameters, nothing to
#: estimate." before the model's log density is evaluated, and CmdStan's ``main`` prints it to
#: stderr and exits with a non-zero code
NO_PARAMETERS = "has no parameters, nothing to estimate"
#: the free parameter of the evaluation copy of such a program (:func:`padded_program`)
PAD_PARAMETER = "pystanprivacy_log_density_pad"
#: the folder, beside a model's executable, of its evaluation copy
PAD_FOLDER = "log_density_pad"
_PAD_DECLARATION = f"real {PAD_PARAMETER};"


def _top_level(program: str) -> list[tuple[str, int, int]]:
    """``(token, start, end)`` of the program's tokens outside every ``{ }`` (comments,
    ``#include`` lines and whitespace skipped; the block braces themselves included)."""
    out, pos, depth = [], 0, 0
    while pos < len(program):
        m = _TOKEN.match(program, pos)
        if m is None:
            raise ValueError(f"cannot read the Stan program at character {pos}: {program[pos : pos + 20]!r}")
        pos, t = m.end(), m.group()
        if m.lastgroup == "skip":
            continue
        if t == "}":
            depth -= 1
        if depth == 0:
            out.append((t, m.start(), m.end()))
        if t == "{":
            depth += 1
    return out


def padded_program(program: str) -> str:
    """``program`` with one more free parameter, ``real pystanprivacy_log_density_pad;``
    (unconstrained, used by no statement), for CmdStan's ``log_prob`` method to evaluate a
    program whose own free parameters have total size 0 (it refuses such a program:
    :data:`NO_PARAMETERS`).

    At the pad's value 0 the copy's log density is the program's own: the pad adds nothing to
    ``target`` and, being unconstrained, no Jacobian term; its gradient is the program's
    gradient (empty) followed by 0 for the pad. Every other statement is unchanged, so a
    ``reject`` or a failed argument check gives the same message, at the same line: the
    declaration goes on the line of the ``parameters {`` header (the first thing in the
    block), or, where the program has no parameters block, a one-line block goes just before
    the first later block (``transformed parameters``, ``model``, ``generated quantities``) or
    at the end.

    Raises
    ------
    ValueError
        The program cannot be tokenised, or already uses the pad's name.

    References
    ----------
    Stan Reference Manual, "Program Blocks" (their order; the parameters block is optional)
    and "Unconstrained real" variables (no transform, no Jacobian term). CmdStan's
    ``log_prob`` method (CmdStan Guide, "Extracting log probabilities and gradients for
    diagnostics").
    """
    if re.search(rf"\b{PAD_PARAMETER}\b", program):
        raise ValueError(f"the Stan program already uses the name {PAD_PARAMETER!r}")
    top = _top_level(program)
    for i, (t, start, _) in enumerate(top):
        follows = top[i + 1][0] if i + 1 < len(top) else None
        after_transformed = i > 0 and top[i - 1][0] == "transformed"
        if t == "parameters" and follows == "{" and not after_transformed:
            brace_end = top[i + 1][2]
            return f"{program[:brace_end]} {_PAD_DECLARATION}{program[brace_end:]}"
    for i, (t, start, _) in enumerate(top):
        follows = top[i + 1][0] if i + 1 < len(top) else None
        if (t, follows) in (("transformed", "parameters"), ("model", "{"), ("generated", "quantities")):
            return f"{program[:start]}parameters {{ {_PAD_DECLARATION} }} {program[start:]}"
    return f"{program.rstrip()}\nparameters {{ {_PAD_DECLARATION} }}\n"


class _Unknown(Exception):
    """A size expression that cannot be evaluated on the data alone."""


def _int(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise _Unknown
    return int(value)


def _truncating_div(a: int, b: int) -> int:
    if b == 0:
        raise _Unknown
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _evaluate(node: ast.AST, data: Mapping[str, Any]) -> int:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, data)
    if isinstance(node, ast.Constant):
        return _int(node.value)
    if isinstance(node, ast.Name):
        if node.id not in data:
            raise _Unknown  # transformed data, or a function of the program
        return _int(data[node.id])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _evaluate(node.operand, data)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, data), _evaluate(node.right, data)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, (ast.Div, ast.FloorDiv)):  # Stan's int / and %/% truncate (C++)
            return _truncating_div(a, b)
        if isinstance(node.op, ast.Mod):  # C++ %: the sign of the dividend
            return a - b * _truncating_div(a, b)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and not node.keywords
        and node.func.id in ("size", "num_elements", "min", "max")
    ):
        if node.func.id in ("min", "max"):
            values = [_evaluate(a, data) for a in node.args]
            if len(values) != 2:
                raise _Unknown
            return min(values) if node.func.id == "min" else max(values)
        if len(node.args) != 1 or not isinstance(node.args[0], ast.Name) or node.args[0].id not in data:
            raise _Unknown
        arr = np.asarray(data[node.args[0].id])
        if node.func.id == "num_elements":
            return int(arr.size)
        if arr.ndim != 1:  # size() of 2-d data: an array's length or a matrix's elements
            raise _Unknown
        return int(arr.shape[0])
    raise _Unknown


def evaluate_size(expression: str, data: Mapping[str, Any]) -> int | None:
    """The value of a declared size ``expression`` (Stan source text) on ``data``, or ``None``
    where it cannot be evaluated on the data alone.

    Understood: int literals, names of int data, ``+ - * / %/% %`` on ints (``/`` and ``%/%``
    truncate towards zero and ``%`` takes the dividend's sign, as in Stan), parentheses,
    ``min``/``max`` of two of these, ``num_elements(x)`` and ``size(x)`` of a one-dimensional
    data input ``x``. Anything else (transformed data, other functions) gives ``None``.

    References
    ----------
    Stan Functions Reference, "Integer-valued basic functions" (``/`` and ``%/%`` on ints round
    towards zero; ``%`` as in C++).
    """
    text = expression.replace("%/%", "//")
    if re.search(r"[^\w\s+\-*/%(),]", text):
        return None
    try:
        return _evaluate(ast.parse(text, mode="eval"), data)
    except (SyntaxError, _Unknown, RecursionError, OverflowError):
        return None


def zero_size_shape(name: str, base: str, sizes: Sequence[str], data: Mapping[str, Any]) -> tuple[int, ...]:
    """The shape of output ``name``, declared as ``base`` with ``sizes`` (its size expressions,
    :func:`program_outputs`), which has no element in a fit on ``data`` (CmdStan wrote no column
    for it). Each size is :func:`evaluate_size`; where exactly one cannot be evaluated and
    every other is positive, that one is 0 (the product is 0).

    Raises
    ------
    RuntimeError
        The shape cannot be told (two sizes unknown, or one unknown beside a zero), the type is
        complex or a tuple, or the evaluated sizes are all positive (then CmdStan should have
        written columns for it): names the output and its declared sizes, never their values.
    """
    declared = f"{name!r} (declared {base}{'[' + ', '.join(sizes) + ']' if sizes else ''})"
    if base in _UNSUPPORTED:
        raise RuntimeError(
            f"the cmdstanpy backend cannot return the zero-length output {declared}: CmdStan "
            f"writes no column for it and this type is not reshaped here; use the pystan backend"
        )
    values = [evaluate_size(s, data) for s in sizes]
    unknown = [k for k, v in enumerate(values) if v is None]
    if any(v is not None and v < 0 for v in values):
        raise RuntimeError(f"output {declared} has a negative size on this data")
    zero = any(v == 0 for v in values)
    if not unknown and zero:
        return tuple(values)  # type: ignore[arg-type]
    if len(unknown) == 1 and not zero:
        values[unknown[0]] = 0
        return tuple(values)  # type: ignore[arg-type]
    if not unknown:
        raise RuntimeError(f"CmdStan wrote no column for output {declared}, whose sizes are all positive on this data")
    raise RuntimeError(
        f"the cmdstanpy backend cannot tell the shape of the zero-length output {declared}: "
        f"CmdStan writes no column for it, and sizes {', '.join(sizes[k] for k in unknown)} "
        f"cannot be evaluated on the data alone; use the pystan backend"
    )


def assemble_outputs(
    order: Sequence[str],
    present: Mapping[str, np.ndarray],
    shapes: Mapping[str, tuple[int, ...]],
    *,
    chains: int,
    draws: int,
) -> dict[str, np.ndarray]:
    """``name -> array(chains, draws, *dims)`` in ``order``: ``present[name]`` (cmdstanpy's
    ``stan_variable``, ``(chains * draws, *dims)`` with the chains one after the other) split
    per chain, or an empty array of ``shapes[name]`` for an output with no element."""
    out: dict[str, np.ndarray] = {}
    for name in order:
        if name in present:
            arr = np.asarray(present[name], dtype=float)
            if arr.shape[0] != chains * draws:
                raise RuntimeError(f"output {name!r} has {arr.shape[0]} draws, expected {chains} x {draws}")
            out[name] = np.ascontiguousarray(arr.reshape(chains, draws, *arr.shape[1:]))
        else:
            shape = tuple(shapes[name])
            if 0 not in shape:
                raise ValueError(f"output {name!r} is missing and its shape {shape} is not empty")
            out[name] = np.zeros((chains, draws, *shape))
    return out


_INFO_CACHE: dict[tuple[str, int], tuple[dict[str, int], dict[str, tuple[str, list[str]]] | None]] = {}
_INFO_LOCK = threading.Lock()


def _declared(handle: Any) -> tuple[dict[str, int], Any]:
    """``({output name: number of dimensions}, the handle's program file)`` from ``stanc --info``
    (``CmdStanModel.src_info()``), cached per program file and modification time."""
    stan_file = handle.stan_file
    key = (str(stan_file), os.stat(stan_file).st_mtime_ns)
    with _INFO_LOCK:
        if key not in _INFO_CACHE:
            info = handle.src_info()
            if not info:
                raise RuntimeError("stanc --info gave nothing for the program (CmdStan >= 2.27 is needed)")
            dims = {name: int(v["dimensions"]) for block in OUTPUT_BLOCKS for name, v in info.get(block, {}).items()}
            _INFO_CACHE[key] = (dims, None)
        return _INFO_CACHE[key][0], key


def _outputs_of(handle: Any, key: tuple[str, int]) -> dict[str, tuple[str, list[str]]]:
    with _INFO_LOCK:
        dims, parsed = _INFO_CACHE[key]
        if parsed is None:
            parsed = program_outputs(handle.code())
            _INFO_CACHE[key] = (dims, parsed)
        return parsed


def variables_of_fit(fit: Any, handle: Any, data: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Every declared output of a cmdstanpy fit (``CmdStanMCMC``), in declaration order, as
    ``(chains, draws, *dims)`` arrays, those with no element included (see module docstring)."""
    draws, chains = fit.draws(concat_chains=False).shape[:2]
    present = {name: fit.stan_variable(name) for name in fit.metadata.stan_vars}
    declared, key = _declared(handle)
    missing = [n for n in declared if n not in present]
    if not missing:
        return assemble_outputs(list(present), present, {}, chains=chains, draws=draws)
    outputs = _outputs_of(handle, key)
    if set(outputs) != set(declared):
        raise RuntimeError(
            f"the program's declarations could not be read: found {sorted(outputs)}, "
            f"stanc --info lists {sorted(declared)}"
        )
    shapes = {}
    for name in missing:
        base, sizes = outputs[name]
        shapes[name] = zero_size_shape(name, base, sizes, data)
        if len(shapes[name]) != declared[name]:
            raise RuntimeError(
                f"output {name!r}: read {len(shapes[name])} dimensions, stanc --info says {declared[name]}"
            )
    return assemble_outputs(list(outputs), present, shapes, chains=chains, draws=draws)


def sample_arguments(
    settings: SamplerSettings, *, data_file: str, output_dir: str, inits: list[str] | None
) -> dict[str, Any]:
    """The keyword arguments of ``CmdStanModel.sample`` for a run with ``settings``."""
    kwargs: dict[str, Any] = dict(
        data=data_file,
        chains=settings.chains,
        parallel_chains=parallel_chains(settings.chains),
        iter_sampling=settings.draws,
        thin=settings.thin,
        seed=int(settings.seed),
        inits=inits,
        output_dir=output_dir,
        show_progress=False,
        show_console=False,
        sig_figs=SIG_FIGS,
    )
    if settings.fixed_param:
        kwargs["fixed_param"] = True
    else:
        kwargs.update(
            iter_warmup=settings.warmup, adapt_delta=settings.adapt_delta, max_treedepth=settings.max_treedepth
        )
    return kwargs


# --------------------------------------------------------------------------- chain processes
#: the private folder of the cmdstanpy fit running in each thread (``threading.get_ident()``)
_RUNNING: dict[int, Path] = {}
_WATCHDOG: dict[str, Any] = {"pid": None, "proc": None}
_WATCHDOG_LOCK = threading.Lock()
_STOPS = {"count": 0}


def _fit_needle(folder: Path) -> str:
    return str(folder) + os.sep


def kill_fit_chains(folder: Path) -> list[int]:
    """SIGKILL the chain processes of the fit whose private folder is ``folder`` (children of
    this process whose command line names a file in it); returns their PIDs."""
    return chain_processes.kill_matching(_fit_needle(folder), parent=os.getpid())


def _reap(folder: Path, parent: int) -> None:
    needle, deadline, gone = _fit_needle(folder), time.monotonic() + REAP_MAX_S, None
    while time.monotonic() < deadline:
        chain_processes.kill_matching(needle, parent=parent)
        if gone is None and not folder.exists():
            gone = time.monotonic()
        if gone is not None and time.monotonic() - gone > REAP_LINGER_S:
            return
        time.sleep(0.01)


def stop_fit(folder: Path) -> None:
    """Kill the chains of the fit in ``folder`` now, and (in a daemon thread) those cmdstanpy
    still starts for it until ``folder`` is gone and :data:`REAP_LINGER_S` more."""
    if not chain_processes.supported():
        return
    _STOPS["count"] += 1
    kill_fit_chains(folder)
    threading.Thread(target=_reap, args=(folder, os.getpid()), name="pystanprivacy-chain-reaper", daemon=True).start()


def _ensure_watchdog() -> None:
    """Start this process's chain watchdog (:mod:`.chain_processes`) unless it runs: a small
    interpreter that kills the chains of this process's fits once this process is gone. A
    process made by ``fork`` starts its own (its fits' folders carry its own PID)."""
    if not chain_processes.supported():
        return
    with _WATCHDOG_LOCK:
        pid, proc = os.getpid(), _WATCHDOG["proc"]
        if _WATCHDOG["pid"] == pid and proc is not None and proc.poll() is None:
            return
        needle = os.sep + workdir_prefix()
        _WATCHDOG.update(
            pid=pid,
            proc=subprocess.Popen(
                [sys.executable, "-I", "-S", chain_processes.__file__, str(pid), needle],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,
            ),
        )  # a terminal's Ctrl-C (to its process group) does not reach it
        atexit.unregister(_stop_watchdog)  # registered once
        atexit.register(_stop_watchdog)


def _stop_watchdog() -> None:
    """At a normal exit after fits that all ended by themselves, the watchdog is ended (SIGTERM)
    and reaped. Once a fit was stopped (:func:`stop_fit`), it is left to see this process end and
    kill what is left (:func:`.chain_processes.watch`): cmdstanpy's worker thread can still start
    a queued chain during interpreter shutdown, after the reaper and this function ran. (Ctrl-C
    during ``Thread.join`` makes CPython 3.11 mark the worker thread stopped while it runs --
    ``Thread._wait_for_tstate_lock`` releases the lock it failed to acquire -- so shutdown does not
    wait for it.)"""
    proc = _WATCHDOG["proc"]
    if _STOPS["count"]:
        return
    if proc is not None and _WATCHDOG["pid"] == os.getpid() and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGTERM has its default action there
            proc.kill()


class _KilledChainNoise(logging.Filter):
    """Drop cmdstanpy's "Chain [n] error: code '-9'" records once this module has killed chains
    (the stopped fit is reported by its own exception); every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (
            _STOPS["count"] and record.msg == "%s error: code '%d' %s" and len(args) == 3 and args[1] == -signal.SIGKILL
        )


_KILLED_CHAIN_NOISE = _KilledChainNoise()


class CmdStanPyBackend(Backend):
    name = "cmdstanpy"

    @classmethod
    def availability(cls) -> str | None:
        try:
            _cmdstanpy()
        except ImportError as exc:  # pragma: no cover - cmdstanpy is a dependency
            return f"cmdstanpy cannot be imported ({exc})"
        if _cmdstan_path() is None:
            return (
                "no CmdStan installation found (set CMDSTAN to its folder or install it in "
                "~/.cmdstan; pystanprivacy never downloads CmdStan)"
            )
        version = _cmdstanpy().utils.cmdstan_version()
        if version is not None and tuple(version) < MIN_CMDSTAN:
            return (
                f"CmdStan {'.'.join(map(str, version))} is older than "
                f"{'.'.join(map(str, MIN_CMDSTAN))}, the oldest this backend runs on"
            )
        return None

    def stop_chains(self) -> None:
        """Kill the chain processes of the fit running in the calling thread (the main thread,
        from the handler :func:`pystanprivacy.sampling.stan._signals_end_fit` installs), and
        those cmdstanpy still starts for it (:func:`stop_fit`). Fits in other threads go on."""
        folder = _RUNNING.get(threading.get_ident())
        if folder is not None:
            stop_fit(folder)

    def version_tag(self) -> str:
        """cmdstanpy's version, CmdStan's version (``cmdstan_version()``, so an in-place
        upgrade of CmdStan gets new executables) and a hash of CmdStan's folder (two
        installations of one version do not share executables)."""
        cmdstanpy = _cmdstanpy()
        path = _cmdstan_path()
        where = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:8] if path else "none"
        version = _cmdstan_version() if path else "none"
        return f"cmdstanpy-{cmdstanpy.__version__}-cmdstan-{version}-{where}"

    def _model_dir(self, key: str, cache_dir: Path) -> Path:
        d = cache_dir
        for part in (self.version_tag(), key):  # each level private (parents=True would make 0755)
            d = d / part
            d.mkdir(exist_ok=True, mode=0o700)
        return d

    def is_compiled(self, program: str, key: str, cache_dir: Path) -> bool:
        d = cache_dir / self.version_tag() / key
        return (d / ("model" + (".exe" if os.name == "nt" else ""))).exists()

    def compile(self, program: str, key: str, cache_dir: Path) -> Any:
        cmdstanpy = _cmdstanpy()
        d = self._model_dir(key, cache_dir)
        stan_file = d / "model.stan"
        if not stan_file.exists() or stan_file.read_text() != program:
            stan_file.write_text(program)
        exe = d / ("model" + (".exe" if os.name == "nt" else ""))
        if exe.exists():
            return cmdstanpy.CmdStanModel(stan_file=str(stan_file), exe_file=str(exe))
        return cmdstanpy.CmdStanModel(stan_file=str(stan_file), force_compile=True)

    def log_density(
        self,
        handle: Any,
        data: Mapping[str, Any],
        params: Sequence[Any],
        workdir: Path,
        *,
        unconstrained: bool = False,
    ) -> list[tuple[float, np.ndarray]]:
        """CmdStan's ``log_prob`` method (CmdStan >= 2.31), run on the model's executable
        (``CmdStanModel.exe_file``) with every file in ``workdir`` (cmdstanpy's own
        ``CmdStanModel.log_prob`` leaves its output in a folder it does not remove).

        A program whose free parameters have total size 0 (``vector[P] p`` with ``P = 0``, or
        no parameters block) is refused by ``log_prob`` (:data:`NO_PARAMETERS`). Its log
        density is then evaluated on its evaluation copy (:func:`padded_program`, compiled once
        beside the model's executable, :meth:`_padded_executable`) at the pad's value 0: the
        same log density, the same messages from the model block, and an empty gradient, as
        pystan gives. (Unconstrained points need at least one value, so only constrained
        points reach this case.)"""
        import pandas as pd

        cmdstanpy = _cmdstanpy()
        data_file = workdir / "data.json"
        cmdstanpy.write_stan_json(str(data_file), dict(data))
        os.chmod(data_file, 0o600)
        exe, padded = str(handle.exe_file), False
        which = "unconstrained_params" if unconstrained else "constrained_params"
        out = []
        for i, p in enumerate(params):
            params_file = workdir / f"params-{i}.json"
            output = workdir / f"log_prob-{i}.csv"
            while True:
                # an unconstrained point is the vector params_r (CmdStan's log_prob documentation)
                point = {"params_r": list(p)} if unconstrained else dict(p)
                if padded:
                    point[PAD_PARAMETER] = 0.0
                cmdstanpy.write_stan_json(str(params_file), point)
                os.chmod(params_file, 0o600)
                cmd = [
                    exe,
                    "log_prob",
                    f"{which}={params_file}",
                    "jacobian=1",
                    "data",
                    f"file={data_file}",
                    "output",
                    f"file={output}",
                    "sig_figs=18",
                ]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=str(workdir))
                refused = proc.returncode and NO_PARAMETERS in proc.stderr + proc.stdout
                if not (refused and not padded and not unconstrained):
                    break
                exe, padded = self._padded_executable(handle), True
            if proc.returncode:
                # the caller redacts the message; CmdStan's output can quote data values
                raise RuntimeError(
                    f"CmdStan's log_prob method failed (return code {proc.returncode}): "
                    f"{proc.stderr.strip() or proc.stdout.strip()}"
                )
            row = pd.read_csv(output, comment="#").iloc[0].to_numpy(dtype=float)  # lp__, then the gradient
            if padded:
                if row.size != 2:  # lp__ and the pad's gradient: the program's own parameters have no element
                    raise RuntimeError(
                        f"the evaluation copy of a program without free parameters has {row.size - 1} "
                        "unconstrained parameters, expected 1 (the pad)"
                    )
                row = row[:1]
            out.append((float(row[0]), np.asarray(row[1:], dtype=float)))
        return out

    def _padded_executable(self, handle: Any) -> str:
        """The executable of the evaluation copy (:func:`padded_program`) of ``handle``'s
        program, compiled on first use (``CmdStanModel(stan_file=..., force_compile=True)``)
        into the private folder :data:`PAD_FOLDER` beside the model's own executable (in the
        model cache, so a cleared cache clears it too), under a file lock, so that two
        processes never compile it at once. The copy's file has the program's file name, so
        CmdStan names the model as it names the program."""
        from filelock import FileLock

        if handle.stan_file is None:
            raise RuntimeError(
                "CmdStan's log_prob method refuses a program without free parameters, and its evaluation "
                "copy needs the program's file, which this model (made from an executable alone) lacks"
            )
        stan_file = Path(handle.stan_file)
        program = padded_program(stan_file.read_text())
        folder = stan_file.parent / PAD_FOLDER
        folder.mkdir(exist_ok=True, mode=0o700)
        copy = folder / stan_file.name
        exe = copy.with_suffix(".exe" if os.name == "nt" else "")
        with FileLock(str(folder / "compile.lock")):
            if exe.exists() and copy.exists() and copy.read_text() == program:
                return str(exe)
            copy.write_text(program)
            exe.unlink(missing_ok=True)
            return str(_cmdstanpy().CmdStanModel(stan_file=str(copy), force_compile=True).exe_file)

    def run(
        self,
        handle: Any,
        data: Mapping[str, Any],
        settings: SamplerSettings,
        workdir: Path,
    ) -> RawFit:
        cmdstanpy = _cmdstanpy()

        data_file = workdir / "data.json"
        cmdstanpy.write_stan_json(str(data_file), dict(data))
        os.chmod(data_file, 0o600)
        out_dir = workdir / "output"
        out_dir.mkdir(mode=0o700)
        inits = None
        if settings.init is not None:
            inits = []
            for i, init in enumerate(settings.init):
                path = workdir / f"init-{i}.json"
                cmdstanpy.write_stan_json(str(path), dict(init))
                inits.append(str(path))
        kwargs = sample_arguments(settings, data_file=str(data_file), output_dir=str(out_dir), inits=inits)
        logger = cmdstanpy.utils.get_logger()
        if _KILLED_CHAIN_NOISE not in logger.filters:  # first: before the redaction filter formats the record
            logger.filters.insert(0, _KILLED_CHAIN_NOISE)
        _ensure_watchdog()
        thread = threading.get_ident()
        _RUNNING[thread] = workdir
        try:
            fit = handle.sample(**kwargs)
        except BaseException:
            # interrupted (Ctrl-C, SIGTERM) or failed: chains may still sample, or be queued
            stop_fit(workdir)
            raise
        finally:
            _RUNNING.pop(thread, None)
        variables = variables_of_fit(fit, handle, data)
        sampler = {}
        for col, arr in fit.method_variables().items():  # (draws, chains)
            if col in SAMPLER_COLUMNS:
                sampler[col] = np.ascontiguousarray(np.asarray(arr, dtype=float).T)
        shutil.rmtree(out_dir, ignore_errors=True)
        return RawFit(variables=variables, sampler=sampler)
