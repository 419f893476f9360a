"""Checks of a model, as opposed to a release: :mod:`pystanprivacy.checks.sbc` is
simulation-based calibration (``pystanprivacy sbc``) of a registry model or of a user's own Stan
program fitted on a :class:`~pystanprivacy.privacy.records.Release`."""

from __future__ import annotations

__all__ = ["sbc"]
