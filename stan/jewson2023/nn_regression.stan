// Jewson, Ghalebikesabi & Holmes (2023), "Differentially private statistical inference
// through beta-divergence one posterior sampling", NeurIPS. Sec. 3, Eq. 2-4, Example 2,
// Appendix B (priors).
//
// Neural-network regression y ~ N(m(x, theta), sigma2), m(x, theta) = w_out' tanh(W' x + b_in)
// + b_out with H hidden units (paper: 10), N(0, prior_sd^2) priors on every weight and bias
// (paper: variance 1), sigma2 >= s2 > 0 enforced by the parameter declaration,
// sigma2 ~ inverse-gamma(prior_a, prior_b) truncated to [s2, inf) (paper: 1, 1, s2 = 0.01).
// Loss switch `betad`: 1 beta-D-Bayes (Eq. 3-4), 0 Gibbs posterior with weight w (Eq. 2).
//
// Privacy (Theorem 1, Example 2): f <= M = (2 pi s2)^(-1/2), so one draw from the converged
// beta-D target is (2 M^(beta-1)/(beta-1), 0)-DP (replace-one) with no bounds on features
// or responses; the driver calibrates beta with the same s2. f_ref = m(x_ref, theta) at K
// public reference inputs is symmetry-invariant and used for the convergence checks.
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
}
transformed data {
  matrix[N, P + 1] X1 = append_col(rep_vector(1, N), X);          // nn_forward's input
  matrix[K, P + 1] X_ref1 = append_col(rep_vector(1, K), X_ref);
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
  vector[H] w_out;
  real b_out;
  real<lower=s2> sigma2;
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
