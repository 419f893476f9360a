// Jewson, Ghalebikesabi & Holmes (2023), "Differentially private statistical inference
// through beta-divergence one posterior sampling", NeurIPS. Sec. 3, Eq. 2-4, Example 2,
// Appendix B (priors).
//
// The target of nn_regression.stan (the same data, priors, loss and outputs), sampled in other
// coordinates. Network regression y ~ N(m(x, theta), sigma2), m(x, theta) =
// w_out' tanh(W' x + b_in) + b_out with H hidden units, N(0, prior_sd^2) priors on every weight
// and bias, sigma2 >= s2 > 0, sigma2 ~ inverse-gamma(prior_a, prior_b) truncated to [s2, inf);
// loss switch `betad`: 1 beta-D-Bayes (Eq. 3-4), 0 Gibbs posterior with weight w (Eq. 2).
//
// Two exact changes of coordinates (tests/models/test_jewson2023_fast.py):
// * the hidden units' symmetry removed: m is unchanged by permuting the units and by
//   (w_j, b_j, v_j) -> (-w_j, -b_j, -v_j) (tanh is odd), and so are the iid priors, so the
//   target takes one value at all 2^H H! images of a point; w_out is declared positive_ordered,
//   which keeps one image of almost every point (ties and v_j = 0 have measure zero). The
//   density there is unchanged (normalised: 2^H H! times larger), and every symmetry-invariant
//   quantity (f_ref, sigma2, predictions) has the same posterior;
// * the output bias sampled as the output at a public centre x_centre, c_out =
//   m(x_centre, theta), with b_out = c_out - w_out' tanh(W' x_centre + b_in): a shift of b_out
//   by a function of the other parameters (unit Jacobian), the N(0, prior_sd^2) prior kept on
//   b_out. The data determine the output near the centre far more precisely than b_out, which
//   before moved together with every w_out and b_in; at n = 1000 a NUTS iteration took 26
//   leapfrog steps instead of 127 (beta-D, epsilon = 5) and 32 instead of 254 (w = 1)
//   (benchmarks/README.md).
//
// Privacy as nn_regression.stan (Theorem 1, Example 2): the same target. The released draw is
// the canonical image (w_out > 0 and increasing) of a draw of nn_regression.stan's target, a
// symmetry-invariant function of it (post-processing).
functions {
#include betad.stanfunctions
}
data {
  int<lower=1> N;
  int<lower=1> P;
  int<lower=1> H;
  matrix[N, P] X;
  vector[N] y;
  int<lower=0, upper=1> betad;
  real<lower=1> beta;
  real<lower=0> w;
  real<lower=0> prior_sd;
  real<lower=0> s2;
  real<lower=0> prior_a;
  real<lower=0> prior_b;
  int<lower=1> K;
  matrix[K, P] X_ref;
  vector[P] x_centre;                      // public (not data): the features' scaling midpoint
}
transformed data {
  matrix[N, P + 1] X1 = append_col(rep_vector(1, N), X);          // nn_forward's input
  matrix[K, P + 1] X_ref1 = append_col(rep_vector(1, K), X_ref);
  row_vector[P + 1] x_centre1 = append_col(1, x_centre');
  if (s2 <= 0) {
    reject("s2 must be > 0: the density bound M = (2 pi s2)^(-1/2) needs it");
  }
  if (betad == 1 && beta <= 1) {
    reject("beta must be > 1 for the beta-D loss");
  }
}
parameters {
  matrix[P, H] W;
  vector[H] b_in;
  positive_ordered[H] w_out;
  real c_out;
  real<lower=s2> sigma2;
}
transformed parameters {
  real b_out = c_out - tanh(x_centre1 * append_row(b_in', W)) * w_out;
}
model {
  vector[N] mu = nn_forward(X1, W, b_in, w_out, b_out);
  to_vector(W) ~ normal(0, prior_sd);
  b_in ~ normal(0, prior_sd);
  w_out ~ normal(0, prior_sd);
  b_out ~ normal(0, prior_sd);
  sigma2 ~ inv_gamma(prior_a, prior_b);
  if (betad == 1) {
    target += betad_normal(y, mu, sigma2, beta);
  } else {
    target += w * normal_lupdf(y | mu, sqrt(sigma2));
  }
}
generated quantities {
  vector[K] f_ref = nn_forward(X_ref1, W, b_in, w_out, b_out);
}
