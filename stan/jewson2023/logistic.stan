// Jewson, Ghalebikesabi & Holmes (2023), "Differentially private statistical inference
// through beta-divergence one posterior sampling", NeurIPS. Sec. 3, Eq. 2-4, Example 1.
//
// Logistic regression p(y = 1 | x, theta) = inv_logit(x' theta), prior theta ~ N(0, prior_sd^2)
// (the paper: variance 9), fitted with one of two losses (data switch `betad`):
//   betad = 1: the beta-D-Bayes posterior (Eq. 3-4)
//              pi(theta | D) ∝ pi(theta) exp{ -sum_i l^(beta)(y_i, f(.; x_i, theta)) },
//   betad = 0: the Gibbs posterior with weight w (Eq. 2), pi(theta) prod_i f(y_i; theta)^w;
//              w = 1 is the standard posterior (beta -> 1), w from Minami et al. (2016) gives
//              their (epsilon, delta)-DP baseline.
//
// Sampling uses the QR reparameterisation (Stan User's Guide, Sec. 1.2) when X has full
// column rank (use_qr = 1): eta = Q* theta_tilde, theta = R*^-1 theta_tilde, a linear map with
// a constant Jacobian, so the target is unchanged; it removes the strong posterior
// correlation of intercept and slopes that makes NUTS slow with a diagonal metric.
//
// Privacy (Theorem 1, Example 1): f <= M = 1, so one draw from the converged beta-D target
// is (2 / (beta - 1), 0)-DP (replace-one). The features need no bounds. The guarantee holds
// for a draw from the exact target only: the Python driver releases a draw after the
// convergence checks pass (or records an explicit override).
functions {
#include betad.stanfunctions
}
data {
  int<lower=1> N;
  int<lower=1> P;
  matrix[N, P] X;                         // features (raw data: OPS sees them)
  array[N] int<lower=0, upper=1> y;        // labels
  int<lower=0, upper=1> betad;            // 1: beta-D loss, 0: w-weighted log-likelihood
  real<lower=1> beta;                      // beta-divergence parameter (> 1 when betad = 1)
  real<lower=0> w;                         // Gibbs weight (used when betad = 0)
  real<lower=0> prior_sd;                  // prior sd of every coefficient (paper: 3)
  int<lower=0, upper=1> use_qr;            // 1: QR reparameterisation (needs rank(X) = P)
}
transformed data {
  array[sum(y)] int ones = betad_positions(y, 1);
  array[N - sum(y)] int zeros = betad_positions(y, 0);
  matrix[N, P] Q;
  matrix[P, P] R_inv;
  if (use_qr == 1) {
    real scale = sqrt(max(N - 1, 1));
    Q = qr_thin_Q(X) * scale;
    R_inv = inverse(qr_thin_R(X) / scale);
  } else {
    Q = X;
    R_inv = identity_matrix(P);
  }
  if (betad == 1 && beta <= 1) {
    reject("beta must be > 1 for the beta-D loss");
  }
}
parameters {
  vector[P] theta_tilde;
}
model {
  vector[N] eta = Q * theta_tilde;
  target += normal_lpdf(R_inv * theta_tilde | 0, prior_sd);  // prior on theta (linear map)
  if (betad == 1) {
    target += betad_bernoulli_logit(ones, zeros, eta, beta);
  } else {
    target += w * bernoulli_logit_lupmf(y | eta);
  }
}
generated quantities {
  vector[P] theta = R_inv * theta_tilde;
}
