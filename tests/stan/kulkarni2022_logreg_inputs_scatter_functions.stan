// Test-only program: evaluates ldp_logreg_inputs_scatter_lpmf (the likelihood of
// stan/kulkarni2022/logistic_regression_inputs.stan, features' term through their scatter
// matrix) next to the per-user ldp_logreg_inputs_lpmf it replaces and to
// ldp_features_scatter_lpdf / ldp_features_lpdf alone, under fixed_param, for
// tests/models/test_kulkarni2022_inputs_ss.py. Sx is formed as in the model's transformed data.
functions {
#include ldp_regression.stanfunctions
}
data {
  int<lower=1> d;
  int<lower=1> n;
  matrix[n, d] zx;
  array[n] int<lower=0, upper=1> zy;
  cov_matrix[d] Sigma;
  vector[d] theta;
  real<lower=0> sigma_x;
  real<lower=0.5, upper=1> p_keep;
  vector[3] cheb;
}
transformed data {
  matrix[d, d] Sx = crossprod(zx);
  matrix[d, d] Lz = cholesky_decompose(add_diag(Sigma, square(sigma_x)));
}
generated quantities {
  matrix[d, d] scatter = Sx;
  real features_per_user = ldp_features_lpdf(zx | Lz);
  real features_scatter = ldp_features_scatter_lpdf(Sx | n, Lz);
  real per_user = ldp_logreg_inputs_lpmf(zy | zx, Sigma, theta, sigma_x, p_keep, cheb);
  real via_scatter = ldp_logreg_inputs_scatter_lpmf(zy | zx, Sx, Sigma, theta, sigma_x, p_keep, cheb);
}
