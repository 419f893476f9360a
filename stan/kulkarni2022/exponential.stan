// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally differentially private Bayesian
// inference". Sec. 3.2.1 (Eq. 6, rectified density), supplement Sec. 10.2 (Eq. 29-30,
// re-derived; "epsilon y" there is epsilon z), prior of Figure 8.
//
// Exponential rate theta from locally perturbed reports, for R independent data sets in
// one run (product posterior: each theta[r] is an exact draw from its own posterior):
//   x_i ~ Exponential(theta),  user i clips x_i to [0, b] and reports
//   z_i = min(x_i, b) + Laplace(0, b / epsilon).
// Every latent x_i is marginalised in closed form (ldp_exp_laplace_loglik, log space).
// Prior: theta ~ Gamma(shape, rate).
//
// Privacy: each report is epsilon-LDP (L1 sensitivity b of clip(x) for any two inputs);
// the posterior is post-processing of the reports. Releases without a seed add discrete
// Laplace noise on a power-of-two grid; the continuous Laplace likelihood is then exact
// up to a constant for each report to within g/(2 beta) (pystanprivacy.noise).
functions {
#include log_phi.stanfunctions
#include ldp.stanfunctions
}
data {
  int<lower=1> R;                          // number of independent data sets
  array[R] int<lower=1> N;                 // users per data set
  vector[sum(N)] z;                        // reports, data set after data set
  real<lower=0> b;                         // clipping bound (x is clipped to [0, b])
  real<lower=0> beta;                      // Laplace scale of the reports, from the release record
                                           // (= sensitivity/epsilon, or the discrete noise's scale)
  real<lower=0> theta_prior_shape;
  real<lower=0> theta_prior_rate;
}
transformed data {
  array[R] int n_lo = ldp_group_count(z, N, 0, b, -1);
  array[R] int n_mid = ldp_group_count(z, N, 0, b, 0);
  array[R] int n_hi = ldp_group_count(z, N, 0, b, 1);
  vector[R] sum_lo = ldp_group_sum(z, N, 0, b, -1);
  vector[R] sum_hi = ldp_group_sum(z, N, 0, b, 1);
  vector[sum(n_mid)] z_mid = ldp_mid_values(z, 0, b, sum(n_mid));
  array[R] int start = ldp_segment_starts(n_mid);
}
parameters {
  vector<lower=0>[R] theta;
}
model {
  theta ~ gamma(theta_prior_shape, theta_prior_rate);
  for (r in 1:R) {
    if (n_mid[r] > 0) {
      target += ldp_exp_laplace_loglik(segment(z_mid, start[r], n_mid[r]), n_lo[r], sum_lo[r],
                                       n_hi[r], sum_hi[r], theta[r], b, beta);
    } else {
      target += ldp_exp_laplace_loglik(rep_vector(0, 0), n_lo[r], sum_lo[r], n_hi[r], sum_hi[r],
                                       theta[r], b, beta);
    }
  }
}
