"""Releases made by other differential-privacy libraries, as :class:`~pystanprivacy.Release`\\ s
with complete records, and this library's records described in their vocabulary.

* :mod:`.opendp`: OpenDP 0.16 (the ``[opendp]`` extra). :func:`~.opendp.import_polars_query`
  (a Polars query of ``dp.len()`` / ``dp.sum`` by public group keys), :func:`~.opendp.import_measurement`
  (``make_laplace`` / ``make_gaussian`` on scalars or vectors), :func:`~.opendp.likelihood` (the
  noise model an imported record selects: the Stan function and its law), :func:`~.opendp.to_opendp`
  and :func:`~.opendp.to_opendp_measurement` (a record in OpenDP's names, or the OpenDP
  measurement with the same noise).

The OpenDP package is imported only when one of these functions is called.
"""

from __future__ import annotations

__all__ = ["opendp"]
