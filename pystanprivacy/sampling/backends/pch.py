"""A GCC precompiled header of Stan's model header for the pystan backend's model builds.

httpstan compiles each model's C++ (``stanc``'s output, which starts with
``#include <stan/model/model_header.hpp>``, i.e. the whole Stan Math library) with
``g++ -O3``. Parsing that header is the same work for every model, so it is done once:
:func:`precompiled_header` builds ``stan_model_header.hpp`` (that one ``#include``) into
``stan_model_header.hpp.gch`` with the model build's own compile command, and
:func:`with_precompiled_header` adds ``-include <folder>/stan_model_header.hpp -Winvalid-pch``
to a model's compile command, so GCC reads the ``.gch`` instead of parsing the headers (the
model's own ``#include`` is then a no-op: the header's include guard is already defined).
The generated code is the same; ``benchmarks/bench_pch.py`` compiles one program both ways and
compares the draws with ``np.array_equal``.

The header is kept in the model cache (``<cache>/pch/<key>``, a private 0700 folder), keyed by
the httpstan version, the compiler's ``--version`` and every flag and macro of the compile command
(GCC refuses a ``.gch`` built with other options anyway: ``-Winvalid-pch`` says so in the model's
compiler output, and GCC then parses the header as usual). It is built once, in a staging folder
that is renamed into place, under a non-blocking lock: a model compiled while another process
builds the header is compiled without it. A header build that fails is recorded
(``<key>.failed``, the compiler's output) and not retried; a build that is killed leaves only its
staging folder. In every such case the model is compiled as it would be without this module.

References
----------
GCC manual, "Using Precompiled Headers",
https://gcc.gnu.org/onlinedocs/gcc/Precompiled-Headers.html
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from .workdirs import staging_folder

#: the file that the ``.gch`` is built from and that each model's compile command ``-include``\ s
HEADER_NAME = "stan_model_header.hpp"
HEADER_TEXT = "#include <stan/model/model_header.hpp>\n"
#: models are built against the precompiled header while this is True (``bench_pch.py`` sets it
#: to False for the plain build it compares with)
ENABLED = True

_log = logging.getLogger(__name__)


def _model_compile(cmd: Sequence[str]) -> tuple[int, str] | None:
    """``(index of "-c", source)`` where ``cmd`` compiles a model's C++ (``... -c <x>.cpp -o <obj> ...``,
    as setuptools spawns it), else ``None`` (e.g. the link command)."""
    try:
        at = list(cmd).index("-c")
    except ValueError:
        return None
    if at + 3 >= len(cmd) or cmd[at + 2] != "-o" or not cmd[at + 1].endswith(".cpp"):
        return None
    return at, cmd[at + 1]


def _header_flags(cmd: Sequence[str], at: int, source: str) -> list[str]:
    """The compile command without its source, object and the source's own folder (``-I``): the
    flags the header is built with (the model's folder, a staging folder, holds none of Stan's headers)."""
    own = f"-I{Path(source).parent}"
    return [arg for arg in [*cmd[:at], *cmd[at + 4 :]] if arg != own]


def _key(flags: Sequence[str], env: Mapping[str, str]) -> str:
    import httpstan

    version = subprocess.run([flags[0], "--version"], capture_output=True, env=dict(env), check=True).stdout
    digest = hashlib.blake2b(digest_size=10)
    for part in (httpstan.__version__.encode(), HEADER_TEXT.encode(), version, *(f.encode() for f in flags)):
        digest.update(part + b"\0")
    return digest.hexdigest()


@contextlib.contextmanager
def _try_lock(path: Path) -> Iterator[bool]:
    """``True`` while this process holds the exclusive lock on ``path``, ``False`` where another does."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


def _build(folder: Path, flags: Sequence[str], env: Mapping[str, str]) -> str:
    """Build ``folder/stan_model_header.hpp.gch``; returns the compiler's output, raises
    ``subprocess.CalledProcessError`` where it fails."""
    header = folder / HEADER_NAME
    header.write_text(HEADER_TEXT)
    # -x c++-header right before the header: the flags after it (httpstan's -O3 -std=c++14 ...) take effect too
    command = [flags[0], *flags[1:], "-x", "c++-header", str(header), "-o", f"{header}.gch"]
    done = subprocess.run(command, capture_output=True, env=dict(env), cwd=folder, check=False)
    output = (done.stdout + done.stderr).decode(errors="replace")
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, command, output)
    return output


def precompiled_header(root: Path, flags: Sequence[str], env: Mapping[str, str]) -> Path | None:
    """The header to ``-include`` for a model compiled with ``flags`` (its ``.gch`` beside it,
    built now where it is missing), or ``None`` where there is none to use: another process is
    building it, or building it failed (now or before: ``<key>.failed``)."""
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = _key(flags, env)
    except (OSError, subprocess.CalledProcessError) as exc:  # the model's compile reports a missing compiler
        _log.warning("no precompiled Stan header (%s); models are compiled without it", exc)
        return None
    final, failed = root / key, root / f"{key}.failed"
    if (final / f"{HEADER_NAME}.gch").is_file():
        return final / HEADER_NAME
    if failed.exists():
        return None
    with _try_lock(root / f"{key}.lock") as locked:
        if not locked:
            return None
        if (final / f"{HEADER_NAME}.gch").is_file():  # built by the process that held the lock
            return final / HEADER_NAME
        staging = staging_folder(root)  # 0700; stale ones of killed builds removed
        try:
            _build(staging, flags, env)
            os.replace(staging, final)
        except subprocess.CalledProcessError as exc:
            failed.write_text(str(exc.output)[-20_000:])
            _log.warning(
                "building the precompiled Stan header failed (exit code %s); models are "
                "compiled without it (compiler output: %s)",
                exc.returncode,
                failed,
            )
            return None
        except OSError as exc:  # e.g. no space left for the .gch (about 1 GB): not recorded, tried again
            _log.warning("building the precompiled Stan header failed (%s); models are compiled without it", exc)
            return None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final / HEADER_NAME


def with_precompiled_header(cmd: Sequence[str], *, root: Path, env: Mapping[str, str]) -> list[str]:
    """``cmd`` with ``-include <header> -Winvalid-pch`` where it compiles a model's C++ and a
    precompiled header is available (:func:`precompiled_header`); otherwise ``cmd`` unchanged."""
    found = _model_compile(cmd)
    if found is None:
        return list(cmd)
    at, source = found
    header = precompiled_header(root, _header_flags(cmd, at, source), env)
    if header is None:
        return list(cmd)
    return [*cmd[:at], "-include", str(header), "-Winvalid-pch", *cmd[at:]]
