// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally differentially private Bayesian
// inference". Sec. 3.2.1 (Eq. 6, rectified density), supplement Sec. 10.1 (Eq. 22-28,
// re-derived: Eq. 27 has typos), priors of Figure 8.
//
// Gaussian (mu, sigma) from locally perturbed reports, for R independent data sets in one
// run (the joint posterior is a product, so each (mu[r], sigma[r]) is an exact draw from
// its own posterior):
//   x_i ~ N(mu, sigma),  user i clips x_i to [a, b] and reports
//   z_i = clip(x_i, a, b) + Laplace(0, (b - a) / epsilon).
// Every latent x_i is marginalised in closed form (ldp_gauss_laplace_loglik, log space,
// stable for small and large epsilon and for z far outside [a, b]).
// Priors: mu ~ N(mu_prior_mean, mu_prior_sd), sigma ~ Gamma(shape, rate).
//
// Privacy: each report is epsilon-LDP (the L1 sensitivity of clip(x) is b - a for any two
// inputs); the posterior is post-processing of the reports. Releases without a seed add
// discrete Laplace noise on a power-of-two grid; the continuous Laplace likelihood is
// then within g/(2 beta) per report of the exact one, up to a constant (pystanprivacy.noise).
functions {
#include log_phi.stanfunctions
#include ldp.stanfunctions
}
data {
  int<lower=1> R;                          // number of independent data sets
  array[R] int<lower=1> N;                 // users per data set
  vector[sum(N)] z;                        // reports, data set after data set
  real a;                                  // clipping interval [a, b]
  real<lower=a> b;
  real<lower=0> beta;                      // Laplace scale of the reports, from the release record
                                           // (= sensitivity/epsilon, or the discrete noise's scale)
  real mu_prior_mean;
  real<lower=0> mu_prior_sd;
  real<lower=0> sigma_prior_shape;
  real<lower=0> sigma_prior_rate;
}
transformed data {
  array[R] int n_lo = ldp_group_count(z, N, a, b, -1);
  array[R] int n_mid = ldp_group_count(z, N, a, b, 0);
  array[R] int n_hi = ldp_group_count(z, N, a, b, 1);
  vector[R] sum_lo = ldp_group_sum(z, N, a, b, -1);
  vector[R] sum_hi = ldp_group_sum(z, N, a, b, 1);
  vector[sum(n_mid)] z_mid = ldp_mid_values(z, a, b, sum(n_mid));
  array[R] int start = ldp_segment_starts(n_mid);
}
parameters {
  vector[R] mu;
  vector<lower=0>[R] sigma;
}
model {
  mu ~ normal(mu_prior_mean, mu_prior_sd);
  sigma ~ gamma(sigma_prior_shape, sigma_prior_rate);
  for (r in 1:R) {
    if (n_mid[r] > 0) {
      target += ldp_gauss_laplace_loglik(segment(z_mid, start[r], n_mid[r]), n_lo[r], sum_lo[r],
                                         n_hi[r], sum_hi[r], mu[r], sigma[r], a, b, beta);
    } else {
      target += ldp_gauss_laplace_loglik(rep_vector(0, 0), n_lo[r], sum_lo[r], n_hi[r], sum_hi[r],
                                         mu[r], sigma[r], a, b, beta);
    }
  }
}
