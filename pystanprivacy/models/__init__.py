"""One module per paper; one Python class per Stan model (release -> fit -> Posterior)."""
