// Poisson counts of G regions released with the secure Gaussian mechanism: discrete Gaussian
// noise on the grid dp_grid = 2^-j (integer counts stay on it), modelled exactly by the
// library's dp_poisson_discrete_gaussian (the true count summed out up to max_count). A
// program right for real (secure) releases only: a seeded release's continuous noise is off
// the grid, and the function rejects it. noise_aware = 0: the naive fit, the released value
// taken as the count (its Poisson variance, no noise).
// tests/checks/test_sbc_secure.py runs its SBC (simulator: poisson_grid_sim.py).
functions {
#include dp_noise.stanfunctions
}
data {
  int<lower=1> dp_size;
  vector[dp_size] dp_y;
  real<lower=0> dp_scale;
  real<lower=0> dp_grid;
  int<lower=0> max_count;
  int<lower=0, upper=1> noise_aware;
}
parameters {
  vector<lower=0>[dp_size] lambda;
}
model {
  lambda ~ gamma(4, 0.5);
  for (g in 1:dp_size) {
    if (noise_aware) {
      dp_y[g] ~ dp_poisson_discrete_gaussian(lambda[g], dp_scale, dp_grid, max_count);
    } else {
      dp_y[g] ~ normal(lambda[g], sqrt(lambda[g]));
    }
  }
}
