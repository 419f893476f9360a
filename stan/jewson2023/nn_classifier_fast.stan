// Jewson, Ghalebikesabi & Holmes (2023), "Differentially private statistical inference
// through beta-divergence one posterior sampling", NeurIPS. Sec. 3, Eq. 2-4, Example 1,
// Appendix B (priors).
//
// The target of nn_classifier.stan (the same data, priors, loss and outputs), sampled in other
// coordinates. Classifier p(y = 1 | x, theta) = inv_logit(m(x, theta)), m(x, theta) =
// w_out' tanh(W' x + b_in) + b_out with H hidden units, N(0, prior_sd^2) priors on every weight
// and bias; loss switch `betad`: 1 beta-D-Bayes (Eq. 3-4), 0 Gibbs posterior with weight w.
//
// Two exact changes of coordinates, as in nn_regression_fast.stan
// (tests/models/test_jewson2023_fast.py):
// * the hidden units' symmetry removed: w_out positive_ordered keeps one of the 2^H H! images
//   (unit permutations, tanh sign flips (w_j, b_j, v_j) -> (-w_j, -b_j, -v_j)) of almost every
//   point; the likelihood and the iid priors take one value at all of them, so every
//   symmetry-invariant quantity (f_ref, predictions) has the same posterior;
// * the output bias sampled as the output at a public centre x_centre, c_out = m(x_centre,
//   theta), b_out = c_out - w_out' tanh(W' x_centre + b_in) (unit Jacobian), the N(0,
//   prior_sd^2) prior kept on b_out.
//
// Privacy as nn_classifier.stan (Theorem 1, Example 1): the same target; the released draw is
// the canonical image of a draw of nn_classifier.stan's target (post-processing).
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
  vector[P] x_centre;                      // public (not data): the features' scaling midpoint
}
transformed data {
  matrix[N, P + 1] X1 = append_col(rep_vector(1, N), X);          // nn_forward's input
  matrix[K, P + 1] X_ref1 = append_col(rep_vector(1, K), X_ref);
  row_vector[P + 1] x_centre1 = append_col(1, x_centre');
  array[sum(y)] int ones = betad_positions(y, 1);
  array[N - sum(y)] int zeros = betad_positions(y, 0);
  if (betad == 1 && beta <= 1) {
    reject("beta must be > 1 for the beta-D loss");
  }
}
parameters {
  matrix[P, H] W;
  vector[H] b_in;
  positive_ordered[H] w_out;
  real c_out;
}
transformed parameters {
  real b_out = c_out - tanh(x_centre1 * append_row(b_in', W)) * w_out;
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
