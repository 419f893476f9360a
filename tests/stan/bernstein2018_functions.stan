// Test-only program (not a model): evaluates the Stan functions used by the Bernstein &
// Sheldon (2018) models at given arguments, in generated quantities, so that
// tests/test_bernstein2018_functions.py can compare them with scipy (run with fixed_param).
functions {
#include log_phi.stanfunctions
#include normal_laplace.stanfunctions
#include expfam_clt.stanfunctions
}
data {
  int<lower=0> N_nl;
  vector[N_nl] nl_y;
  vector[N_nl] nl_mu;
  vector<lower=0>[N_nl] nl_sigma;
  vector<lower=0>[N_nl] nl_b;
  int<lower=0> N_te;
  vector<lower=0>[N_te] te_theta;
  vector<lower=0>[N_te] te_v;
  vector[N_te] te_w;                    // a negative value stands for +infinity
  vector<lower=0>[N_te] te_n;
  int<lower=0> N_mn;
  int<lower=2> K;
  array[N_mn] vector[K] mn_y;
  array[N_mn] simplex[K] mn_theta;
  vector<lower=0>[N_mn] mn_n;
  array[N_mn] vector<lower=0>[K] mn_var;
}
generated quantities {
  vector[N_nl] nl_lpdf;
  array[N_te] vector[2] te_moments;
  array[N_te] vector[2] te_rsclt;
  vector[N_mn] mn_lpdf;
  for (i in 1:N_nl) {
    nl_lpdf[i] = normal_laplace_lpdf(nl_y[i] | nl_mu[i], nl_sigma[i], nl_b[i]);
  }
  for (i in 1:N_te) {
    real w = te_w[i] < 0 ? positive_infinity() : te_w[i];
    te_moments[i] = truncated_exponential_moments(te_theta[i], te_v[i], w);
    te_rsclt[i] = rs_clt_truncated_exponential(te_theta[i], te_n[i], te_v[i], w);
  }
  for (i in 1:N_mn) {
    mn_lpdf[i] = multinomial_clt_noisy_lpdf(mn_y[i] | mn_theta[i], mn_n[i], mn_var[i]);
  }
}
