// Test-only program: stan/jewson2023/nn_classifier.stan as it was before the exact rewrite of
// its loss and network output (issue 15), for the same-posterior test of
// tests/models/test_jewson2023_speedups.py.
// Jewson, Ghalebikesabi & Holmes (2023), "Differentially private statistical inference
// through beta-divergence one posterior sampling", NeurIPS. Sec. 3, Eq. 2-4, Example 1,
// Appendix B (priors).
//
// Neural-network classifier p(y = 1 | x, theta) = inv_logit(m(x, theta)),
// m(x, theta) = w_out' tanh(W' x + b_in) + b_out, one hidden layer of H units (paper: 10),
// N(0, prior_sd^2) priors on every weight and bias (paper: variance 1). Loss switch `betad`:
//   betad = 1: beta-D-Bayes (Eq. 3-4);  betad = 0: Gibbs posterior with weight w (Eq. 2),
//   w = 1 the standard posterior.
//
// Privacy (Theorem 1, Example 1): f <= M = 1 whatever m(x, theta), so one draw from the
// converged beta-D target is (2 / (beta - 1), 0)-DP (replace-one), no feature bounds needed.
// Generated quantity f_ref = m(x_ref, theta) at K public reference inputs: invariant to the
// network's symmetries (hidden-unit permutations, tanh sign flips), so the driver can judge
// convergence on it (label switching makes the raw weights' R-hat meaningless).
functions {
  // the former beta-D Bernoulli loss and network output (stan/functions/betad.stanfunctions
  // before the rewrite of issue 15)
  real betad_bernoulli_logit(vector y, vector eta, real beta) {
    real b = beta - 1;
    vector[rows(eta)] lp1 = log_inv_logit(eta);
    vector[rows(eta)] lp0 = log1m_inv_logit(eta);
    vector[rows(eta)] logf = y .* lp1 + (1 - y) .* lp0;
    vector[rows(eta)] a1 = beta * lp1;
    vector[rows(eta)] a0 = beta * lp0;
    vector[rows(eta)] log_int = fmax(a1, a0) + log1p_exp(-abs(a1 - a0));
    return sum(expm1(b * logf)) / b - sum(exp(log_int)) / beta;
  }
  vector nn_forward(matrix X, matrix W, vector b_in, vector w_out, real b_out) {
    return tanh(X * W + rep_matrix(b_in', rows(X))) * w_out + b_out;
  }
}
data {
  int<lower=1> N;
  int<lower=1> P;
  int<lower=1> H;
  matrix[N, P] X;
  array[N] int<lower=0, upper=1> y;
  int<lower=0, upper=1> betad;
  real<lower=1> beta;
  real<lower=0> w;
  real<lower=0> prior_sd;
  int<lower=1> K;
  matrix[K, P] X_ref;                      // public reference inputs (not data)
}
transformed data {
  vector[N] yv = to_vector(y);
  if (betad == 1 && beta <= 1) {
    reject("beta must be > 1 for the beta-D loss");
  }
}
parameters {
  matrix[P, H] W;
  vector[H] b_in;
  vector[H] w_out;
  real b_out;
}
model {
  vector[N] eta = nn_forward(X, W, b_in, w_out, b_out);
  to_vector(W) ~ normal(0, prior_sd);
  b_in ~ normal(0, prior_sd);
  w_out ~ normal(0, prior_sd);
  b_out ~ normal(0, prior_sd);
  if (betad == 1) {
    target += betad_bernoulli_logit(yv, eta, beta);
  } else {
    target += w * bernoulli_logit_lupmf(y | eta);
  }
}
generated quantities {
  vector[K] f_ref = nn_forward(X_ref, W, b_in, w_out, b_out);
}
