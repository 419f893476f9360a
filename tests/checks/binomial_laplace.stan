// Test program of tests/checks/test_sbc.py (a user's own program, checked by `pystanprivacy sbc`):
// theta ~ Beta(2, 2); the count of ones among dp_n records, released with the Laplace mechanism
// (sensitivity 1, continuous noise of a seeded release); the exact noise-aware likelihood from the
// function library. Its simulator is binomial_laplace_sim.py beside it.
functions {
#include dp_noise.stanfunctions
}
data {
  real dp_y;
  int<lower=1> dp_n;
  real<lower=0> dp_scale;
}
parameters {
  real<lower=0, upper=1> theta;
}
model {
  theta ~ beta(2, 2);
  dp_y ~ dp_binomial_laplace(dp_n, theta, dp_scale);
}
