// Test-only program: evaluates the functions of stan/functions/ldp_regression.stanfunctions
// (Kulkarni et al. 2022 regression models) under fixed_param, for comparison with numpy,
// scipy quadrature and Monte Carlo in tests/test_kulkarni2022_regression_functions.py.
functions {
#include ldp_regression.stanfunctions
}
data {
  int<lower=1> d;
  cov_matrix[d] Sigma;
  vector[d] theta;
  real<lower=0> sigma;
  int<lower=1> n_quad;
  vector[n_quad] quad_x;
  simplex[n_quad] quad_w;
  int<lower=1> n_s;
  vector<lower=0>[n_s] s_values;            // scales at which to evaluate the Stein constants
  int<lower=1> n;
  matrix[n, d] zx;
  vector[n] zy;
  array[n] int<lower=0, upper=1> zb;
  real<lower=0> sigma_x;
  real<lower=0> sigma_y;
  real<lower=0.5, upper=1> p_keep;
  vector[3] cheb;
}
transformed data {
  int m_lin = ldp_pair_count(d, 1);
  int m_log = d + ldp_pair_count(d, 0);
}
generated quantities {
  array[m_lin] int pair_i = ldp_pair_index(d, 1, 1);
  array[m_lin] int pair_j = ldp_pair_index(d, 1, 0);
  vector[m_lin] pair_w = ldp_pair_weight(d, 1);
  vector[m_lin] lin_mean;
  matrix[m_lin, m_lin] lin_cov;
  vector[m_log] log_mean;
  matrix[m_log, m_log] log_cov;
  matrix[n_s, 2] stein;
  vector[n] lin_inputs_ll;
  vector[n] log_inputs_ll;
  real lin_inputs_total = ldp_linreg_inputs_lpdf(zy | zx, Sigma, theta, sigma, sigma_x, sigma_y);
  real log_inputs_total = ldp_logreg_inputs_lpmf(zb | zx, Sigma, theta, sigma_x, p_keep, cheb);
  {
    matrix[d + 1, d + 1] C = ldp_linreg_joint_cov(Sigma, theta, sigma);
    array[m_log - d] int K = ldp_pair_index(d, 0, 1);
    array[m_log - d] int L = ldp_pair_index(d, 0, 0);
    vector[m_log - d] w = ldp_pair_weight(d, 0);
    vector[2] e = ldp_logit_stein(sqrt(quad_form(Sigma, theta)), quad_x, quad_w);
    lin_mean = ldp_quadratic_mean(C, pair_i, pair_j, pair_w);
    lin_cov = ldp_quadratic_cov(C, pair_i, pair_j, pair_w);
    log_mean = ldp_logreg_ss_mean(Sigma, theta, K, L, w, e);
    log_cov = ldp_logreg_ss_cov(Sigma, theta, K, L, w, e);
    for (k in 1:n_s) {
      stein[k] = ldp_logit_stein(s_values[k], quad_x, quad_w)';
    }
    for (i in 1:n) {
      lin_inputs_ll[i] = ldp_linreg_inputs_lpdf(zy[i:i] | zx[i:i], Sigma, theta, sigma, sigma_x, sigma_y);
      log_inputs_ll[i] = ldp_logreg_inputs_lpmf(zb[i:i] | zx[i:i], Sigma, theta, sigma_x, p_keep, cheb);
    }
  }
}
