"""Loaders of real data sets shared by several papers' reproductions (UCI: Adult, Abalone,
Wine quality). A paper's own data loaders live in its ``experiments/<paper>/`` folder."""


def __getattr__(name: str):
    """Until 0.3: the war-log loaders that ``pystanprivacy.datasets`` held before the 0.2
    layout, now in :mod:`pystanprivacy.experiments.foulds2016.warlogs` (with a warning)."""
    import importlib
    import warnings

    warlogs = importlib.import_module("pystanprivacy.experiments.foulds2016.warlogs")
    if name.startswith("_") or not hasattr(warlogs, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"pystanprivacy.datasets.{name} moved to pystanprivacy.experiments.foulds2016.warlogs.{name} "
        "(the old path will be removed in 0.3)",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(warlogs, name)
