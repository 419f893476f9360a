"""The papers' non-Stan comparators, one module per paper.

* :mod:`pystanprivacy.baselines.bernstein2018`: the Gibbs samplers of Bernstein & Sheldon
  (2018, Algorithms 1-3), the naive and non-private conjugate posteriors and the OPS
  baseline of their experiments.
"""
