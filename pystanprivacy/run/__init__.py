"""Running experiments: tasks, seeds and resume (:mod:`.runner`), the optional Dask cluster
(:mod:`.cluster`), and the command-line options shared by ``pystanprivacy reproduce`` and the
per-paper scripts (:mod:`.options`, :mod:`.script`)."""
