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
#include betad.stanfunctions
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
  matrix[N, P + 1] X1 = append_col(rep_vector(1, N), X);          // nn_forward's input
  matrix[K, P + 1] X_ref1 = append_col(rep_vector(1, K), X_ref);
  array[sum(y)] int ones = betad_positions(y, 1);
  array[N - sum(y)] int zeros = betad_positions(y, 0);
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
  vector[N] eta = nn_forward(X1, W, b_in, w_out, b_out);
  to_vector(W) ~ normal(0, prior_sd);
  b_in ~ normal(0, prior_sd);
  w_out ~ normal(0, prior_sd);
  b_out ~ normal(0, prior_sd);
  if (betad == 1) {
    target += betad_bernoulli_logit(ones, zeros, eta, beta);
  } else {
    target += w * bernoulli_logit_lupmf(y | eta);
  }
}
generated quantities {
  vector[K] f_ref = nn_forward(X_ref1, W, b_in, w_out, b_out);
}
