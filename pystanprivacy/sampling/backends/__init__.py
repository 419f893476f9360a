"""Interchangeable Stan backends: cmdstanpy (when CmdStan is installed) and pystan 3."""

from __future__ import annotations

import os

from .base import Backend, RawFit, SamplerSettings
from .cmdstanpy_backend import CmdStanPyBackend
from .pystan_backend import PystanBackend

BACKENDS: dict[str, type[Backend]] = {
    CmdStanPyBackend.name: CmdStanPyBackend,
    PystanBackend.name: PystanBackend,
}
ENV_VAR = "PYSTANPRIVACY_BACKEND"
_CHOICES = ("auto", *BACKENDS)


def select_backend(name: str | None = None) -> Backend:
    """The backend named by ``name`` or ``$PYSTANPRIVACY_BACKEND`` (default ``auto``).

    ``auto`` prefers cmdstanpy when a CmdStan installation is found and otherwise uses
    pystan. Raises ``ValueError`` for an unknown name and ``RuntimeError`` naming both
    options when the requested backend (or, for ``auto``, either backend) cannot be used.
    """
    source = "backend"
    if name is None:
        name = os.environ.get(ENV_VAR, "auto")
        source = ENV_VAR
    if not isinstance(name, str) or name.strip().lower() not in _CHOICES:
        raise ValueError(f"{source} must be one of {', '.join(_CHOICES)}; got {name!r}")
    name = name.strip().lower()
    if name != "auto":
        why = BACKENDS[name].availability()
        if why is not None:
            raise RuntimeError(f"Stan backend {name!r} cannot be used: {why}")
        return BACKENDS[name]()
    reasons = []
    for candidate in ("cmdstanpy", "pystan"):
        why = BACKENDS[candidate].availability()
        if why is None:
            return BACKENDS[candidate]()
        reasons.append(f"{candidate}: {why}")
    raise RuntimeError(
        "no Stan backend can be used here. Install pystan 3 (pip install 'pystan>=3.10', "
        "needs a C++ compiler) or install CmdStan and set CMDSTAN. Details: " + "; ".join(reasons)
    )


def preflight(backend: str | Backend | None = None) -> None:
    """Check, before anything is charged or started, that a fit can run here on ``backend``
    (as for :func:`select_backend`; default ``$PYSTANPRIVACY_BACKEND``, else ``auto``): the
    selection itself, then the backend's :meth:`~Backend.preflight` (pystan: a folder short
    enough for its Unix sockets, see :func:`.pystan_backend.socket_root`).

    Raises
    ------
    ValueError, RuntimeError
        As :func:`select_backend`; ``RuntimeError`` from the backend's check, naming the
        setting to change.
    """
    chosen = backend if isinstance(backend, Backend) else select_backend(backend)
    chosen.preflight()


__all__ = ["Backend", "RawFit", "SamplerSettings", "BACKENDS", "select_backend", "preflight", "ENV_VAR"]
