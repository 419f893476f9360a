"""Reproductions of the papers' experiments: one module per paper.

Each module has experiment functions returning tidy (long-format) pandas tables and a
``reproduce(out_dir, *, quick=True, seed=0, workers=1, progress=True)`` function that
runs them all and writes CSV + JSON sidecars + PNG figures.
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: paper short name -> module holding its ``reproduce`` function
PAPERS: dict[str, str] = {
    "foulds2016": "pystanprivacy.experiments.foulds2016",
    "bernstein2018": "pystanprivacy.experiments.bernstein2018",
    "kulkarni2022": "pystanprivacy.experiments.kulkarni2022",
    "jewson2023": "pystanprivacy.experiments.jewson2023",
}


def known_papers() -> list[str]:
    """Short names of the papers that :func:`get_paper` can reproduce."""
    return sorted(PAPERS)


def get_paper(name: str) -> ModuleType:
    """The experiment module of paper ``name``; ``ValueError`` listing the known papers."""
    if not isinstance(name, str) or name not in PAPERS:
        raise ValueError(f"unknown paper {name!r}; known papers: {', '.join(known_papers())}")
    return importlib.import_module(PAPERS[name])


__all__ = ["PAPERS", "known_papers", "get_paper"]
