"""The sampling core: Stan programs, flattening and the compile cache (:mod:`.stan`), the
interchangeable backends (:mod:`.backends`), posteriors (:mod:`.posterior`), MCMC
diagnostics (:mod:`.diagnostics`) and generic evaluation of draws (:mod:`.evaluate`).
Never imports the privacy core. Submodules are imported on use (Stan is heavy).
"""
