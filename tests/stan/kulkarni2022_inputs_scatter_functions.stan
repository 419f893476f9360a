// Test-only program: evaluates ldp_linreg_inputs_scatter_lpdf (the scatter-matrix likelihood of
// stan/kulkarni2022/linear_regression_inputs.stan) next to the per-user sum
// ldp_linreg_inputs_lpdf that it replaces, under fixed_param, for
// tests/test_kulkarni2022_inputs_ss.py. S is formed as in the model's transformed data.
functions {
#include ldp_regression.stanfunctions
}
data {
  int<lower=1> d;
  int<lower=1> n;
  matrix[n, d] zx;
  vector[n] zy;
  cov_matrix[d] Sigma;
  vector[d] theta;
  real<lower=0> sigma;
  real<lower=0> sigma_x;
  real<lower=0> sigma_y;
}
transformed data {
  matrix[d + 1, d + 1] S = crossprod(append_col(zx, zy));
}
generated quantities {
  matrix[d + 1, d + 1] scatter = S;
  real per_user = ldp_linreg_inputs_lpdf(zy | zx, Sigma, theta, sigma, sigma_x, sigma_y);
  real via_scatter = ldp_linreg_inputs_scatter_lpdf(S | n, Sigma, theta, sigma, sigma_x, sigma_y);
}
