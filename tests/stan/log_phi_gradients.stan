// Test-only program (not a model): its log density is one of the functions below, so that
// tests/models/test_log_phi_gradients.py can compare the autodiff gradient with scipy and
// with finite differences of the (quadrature-checked) log density.
//   which = 0: logPhi(p[1] + x[k]) summed over k (the scalar function, one element at a time)
//   which = 1: sum(logPhi(p[1] + x)) (the vector function)
//   which = 2: Gaussian local-DP likelihood of the reports x at mu = p[1], sigma = exp(p[2])
//   which = 3: sum of normal_laplace_lpdf(x[k] | p[1], exp(p[2]), beta)
functions {
#include log_phi.stanfunctions
#include ldp.stanfunctions
#include normal_laplace.stanfunctions
}
data {
  int<lower=0, upper=3> which;
  int<lower=1> N;
  vector[N] x;
  real a;
  real<lower=a> b;
  real<lower=0> beta;
}
transformed data {
  array[1] int n = {N};
  array[1] int n_lo = ldp_group_count(x, n, a, b, -1);
  array[1] int n_hi = ldp_group_count(x, n, a, b, 1);
  array[1] int n_mid = ldp_group_count(x, n, a, b, 0);
  vector[1] s_lo = ldp_group_sum(x, n, a, b, -1);
  vector[1] s_hi = ldp_group_sum(x, n, a, b, 1);
  vector[n_mid[1]] x_mid = ldp_mid_values(x, a, b, n_mid[1]);
}
parameters {
  vector[2] p;
}
model {
  if (which == 0) {
    for (k in 1:N) target += logPhi(p[1] + x[k]);
  } else if (which == 1) {
    target += sum(logPhi(p[1] + x));
  } else if (which == 2) {
    target += ldp_gauss_laplace_loglik(x_mid, n_lo[1], s_lo[1], n_hi[1], s_hi[1], p[1], exp(p[2]), a, b, beta);
  } else {
    for (k in 1:N) target += normal_laplace_lpdf(x[k] | p[1], exp(p[2]), beta);
  }
}
