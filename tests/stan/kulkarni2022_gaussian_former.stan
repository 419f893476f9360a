// Test-only program: stan/kulkarni2022/gaussian.stan as it was before 2026-11-27 (sixth
// session), i.e. with every log Phi through Stan's std_normal_lcdf, whose derivative is off by
// 1e-5 (and by 2e-3 at x = -74). Same log density as the model; the gradient differs.
// tests/models/test_log_phi_gradients.py and benchmarks/bench_ldp_gradient.py compare them.
functions {
  real logPhi(real x) {
    return std_normal_lcdf(x);
  }
  vector logPhi(vector x) {  // the former ldp_log_Phi
    int n = num_elements(x);
    if (n == 0 || min(x) > -30) {
      return log(Phi(x));
    }
    vector[n] out;
    for (i in 1:n) {
      out[i] = std_normal_lcdf(x[i]);
    }
    return out;
  }
#include ldp.stanfunctions
}
data {
  int<lower=1> R;
  array[R] int<lower=1> N;
  vector[sum(N)] z;
  real a;
  real<lower=a> b;
  real<lower=0> beta;
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
