"""Reproductions of the papers' experiments: one package per paper.

Each ``experiments/<paper>/`` holds that paper's experiment functions (tidy, long-format
pandas tables), its baselines, data loaders and figures, and follows the :class:`Paper`
protocol, which is all that ``pystanprivacy reproduce`` and ``scripts/<paper>.py`` rely on:

* ``PAPER``: the paper's short name (the key of :data:`PAPERS`);
* ``DATA_HELP``: what ``--data PATH`` means for the paper (one line, shown in the help of
  ``pystanprivacy reproduce``), or ``None`` when the paper takes no data;
* ``PARTS``: the names of the parts the paper can run separately (``--parts``), or ``None``
  when it runs as a whole;
* ``reproduce(out_dir, *, quick=True, seed=0, workers=1, progress=True, data_path=None)``:
  run everything and write CSV tables with JSON sidecars and PNG figures into ``out_dir``;
  return the tables by name. A paper with ``PARTS`` also takes ``parts=`` (a tuple of names);
  a paper whose ``DATA_HELP`` is ``None`` refuses a ``data_path``.

Optional: ``DATA_PARTS``, the parts that read ``--data`` (``reproduce --data F --parts P``
naming none of them is a usage error, before any work).

Optional: ``FULL_EXTRAS``, part name -> ``(extra, is_installed)``: the parts whose comparison
at full scale needs an optional extra (``pip install 'pystanprivacy[extra]'``). Without it
such a part leaves those rows out, and its saved task results (``OUT/.tasks``) would keep
them out on every resumed run, so a ``--full`` run refuses to start
(:func:`pystanprivacy.run.options.missing_full_extras`) unless told ``--without-extras``.

:func:`get_paper` imports a paper's package and checks the declarations.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from types import ModuleType
from typing import Any, Protocol

#: paper short name -> package holding its ``reproduce`` function
PAPERS: dict[str, str] = {
    "foulds2016": "pystanprivacy.experiments.foulds2016",
    "bernstein2018": "pystanprivacy.experiments.bernstein2018",
    "kulkarni2022": "pystanprivacy.experiments.kulkarni2022",
    "jewson2023": "pystanprivacy.experiments.jewson2023",
}


class Paper(Protocol):
    """What a paper's package declares (see the module docstring); a module satisfies it."""

    PAPER: str
    DATA_HELP: str | None
    PARTS: tuple[str, ...] | None

    def reproduce(
        self,
        out_dir: str | os.PathLike,
        *,
        quick: bool = True,
        seed: int = 0,
        workers: int = 1,
        progress: bool = True,
        data_path: str | os.PathLike | None = None,
    ) -> Mapping[str, Any]:
        """Run the paper's experiments into ``out_dir``; return the tables by name."""
        ...


def known_papers() -> list[str]:
    """Short names of the papers that :func:`get_paper` can reproduce."""
    return sorted(PAPERS)


def check_paper(module: Any, name: str) -> Paper:
    """``module`` itself when it declares the :class:`Paper` protocol for paper ``name``;
    ``TypeError`` listing every declaration that is missing or wrong otherwise."""
    problems = []
    if getattr(module, "PAPER", None) != name:
        problems.append(f"PAPER must be {name!r}, got {getattr(module, 'PAPER', '<missing>')!r}")
    if not callable(getattr(module, "reproduce", None)):
        problems.append("it has no reproduce function")
    if not hasattr(module, "DATA_HELP"):
        problems.append("DATA_HELP is missing (a one-line help for --data, or None)")
    elif not (module.DATA_HELP is None or (isinstance(module.DATA_HELP, str) and module.DATA_HELP.strip())):
        problems.append(f"DATA_HELP must be a non-empty string or None, got {module.DATA_HELP!r}")
    if not hasattr(module, "PARTS"):
        problems.append("PARTS is missing (a tuple of part names, or None)")
    elif not (
        module.PARTS is None
        or (isinstance(module.PARTS, tuple) and module.PARTS and all(isinstance(p, str) and p for p in module.PARTS))
    ):
        problems.append(f"PARTS must be a non-empty tuple of names or None, got {module.PARTS!r}")
    if problems:
        where = getattr(module, "__name__", type(module).__name__)
        raise TypeError(
            f"{where} does not follow the paper protocol of pystanprivacy.experiments: " + "; ".join(problems)
        )
    return module


def get_paper(name: str) -> Paper:
    """The package of paper ``name``, checked against the :class:`Paper` protocol;
    ``ValueError`` listing the known papers for an unknown name."""
    if not isinstance(name, str) or name not in PAPERS:
        raise ValueError(f"unknown paper {name!r}; known papers: {', '.join(known_papers())}")
    module: ModuleType = importlib.import_module(PAPERS[name])
    return check_paper(module, name)


__all__ = ["PAPERS", "Paper", "known_papers", "check_paper", "get_paper"]
