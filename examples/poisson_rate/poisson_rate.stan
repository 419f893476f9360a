// Noise-aware hierarchical Poisson rates from Laplace-noised counts (pystanprivacy, issue 51 item 4).
//
// A health agency releases, for each of G regions, the number of cases y_g = c_g + noise: c_g is
// the true count of cases among the region's residents, the noise is the Laplace mechanism's
// (record: mechanism "laplace", scale = sensitivity / epsilon; a secure release adds discrete
// Laplace noise on the integers, whose likelihood in lambda is the same up to a constant). The
// exposures E_g (person-years, in thousands) are public. The model:
//   mu ~ N(log 5, 0.3),  tau ~ N+(0, 0.2),  z_g ~ N(0, 1),  lambda_g = exp(mu + tau z_g)
//   c_g ~ Poisson(E_g lambda_g),  y_g = c_g + Laplace(0, dp_scale)
// The noise model is the library's dp_poisson_laplace_lpdf: the true count summed out up to the
// public bound max_count. Privacy: the fit reads only the release and public data.
functions {
#include dp_noise.stanfunctions
}
data {
  int<lower=1> dp_size;            // G regions: one released count each
  vector[dp_size] dp_y;            // the released (noisy) counts
  real<lower=0> dp_scale;          // the Laplace scale of the release's record
  vector<lower=0>[dp_size] exposure;
  int<lower=0> max_count;          // a public bound of every true count
}
parameters {
  real mu;
  real<lower=0> tau;
  vector[dp_size] z;
}
transformed parameters {
  vector[dp_size] lambda = exp(mu + tau * z);
}
model {
  mu ~ normal(log(5), 0.3);
  tau ~ normal(0, 0.2);
  z ~ std_normal();
  for (g in 1:dp_size) {
    dp_y[g] ~ dp_poisson_laplace(exposure[g] * lambda[g], dp_scale, max_count);
  }
}
