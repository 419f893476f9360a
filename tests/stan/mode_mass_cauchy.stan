// Test-only posterior with two modes of known, unequal mass (issue 64, section 2):
// tests/sampling/test_modes_stan.py. Not a model of the papers.
//
// Cauchy(theta, 1) observations in two mirrored clusters and a prior N(prior_mu, prior_sd^2)
// off the centre: the posterior of theta has a mode near each cluster with a valley between
// them some 28 nats deep (NUTS does not cross it), and the prior makes their masses unequal.
// The mass of each mode is computed exactly by quadrature in the test, and the two modes
// predict the data symmetrically, so neither chain counts nor stacking give the masses.
data {
  int<lower=1> N;
  vector[N] y;
  real prior_mu;
  real<lower=0> prior_sd;
}
parameters {
  real theta;
}
model {
  theta ~ normal(prior_mu, prior_sd);
  y ~ cauchy(theta, 1);
}
generated quantities {
  vector[N] log_lik;
  for (n in 1:N) {
    log_lik[n] = cauchy_lpdf(y[n] | theta, 1);
  }
}
