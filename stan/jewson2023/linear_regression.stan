// Jewson, Ghalebikesabi & Holmes (2023), "Differentially private statistical inference
// through beta-divergence one posterior sampling", NeurIPS. Sec. 3, Eq. 2-4, Example 2,
// Appendix B (priors).
//
// Gaussian linear regression y ~ N(x' theta, sigma2) with sigma2 >= s2 > 0 enforced by the
// parameter declaration, sigma2 ~ inverse-gamma(prior_a, prior_b) truncated to [s2, inf)
// (paper: shape = scale = 1, s2 = 0.01), theta | sigma2 ~ N(0, prior_var_scale * sigma2)
// (paper: 9 sigma2). Loss switch `betad`:
//   betad = 1: beta-D-Bayes (Eq. 3-4), integral term
//              int N(z; m, sigma2)^beta dz = (2 pi sigma2)^(-(beta - 1)/2) beta^(-1/2);
//   betad = 0: Gibbs posterior with weight w (Eq. 2); w = 1 is the standard posterior.
//
// Sampling uses the QR reparameterisation when X has full column rank (use_qr = 1):
// mu = Q* theta_tilde, theta = R*^-1 theta_tilde (linear, constant Jacobian: same target).
//
// Privacy (Theorem 1, Example 2): the density is bounded by M = (2 pi s2)^(-1/2) because
// sigma2 >= s2, so one draw from the converged beta-D target is (2 M^(beta-1)/(beta-1), 0)-DP
// (replace-one), with no bounds on features or responses. The Python driver calibrates beta
// with the SAME s2 that is passed here. Released only after convergence checks pass.
functions {
#include betad.stanfunctions
}
data {
  int<lower=1> N;
  int<lower=1> P;
  matrix[N, P] X;
  vector[N] y;
  int<lower=0, upper=1> betad;
  real<lower=1> beta;
  real<lower=0> w;
  real<lower=0> s2;                        // lower bound of sigma2 (must be > 0)
  real<lower=0> prior_a;                   // inverse-gamma shape
  real<lower=0> prior_b;                   // inverse-gamma scale
  real<lower=0> prior_var_scale;           // theta ~ N(0, prior_var_scale * sigma2)
  int<lower=0, upper=1> use_qr;            // 1: QR reparameterisation (needs rank(X) = P)
}
transformed data {
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
  if (s2 <= 0) {
    reject("s2 must be > 0: the density bound M = (2 pi s2)^(-1/2) needs it");
  }
  if (betad == 1 && beta <= 1) {
    reject("beta must be > 1 for the beta-D loss");
  }
}
parameters {
  vector[P] theta_tilde;
  real<lower=s2> sigma2;
}
model {
  vector[N] mu = Q * theta_tilde;
  sigma2 ~ inv_gamma(prior_a, prior_b);    // truncation at s2: its constant is data-only
  target += normal_lpdf(R_inv * theta_tilde | 0, sqrt(prior_var_scale * sigma2));
  if (betad == 1) {
    target += betad_normal(y, mu, sigma2, beta);
  } else {
    target += w * normal_lupdf(y | mu, sqrt(sigma2));
  }
}
generated quantities {
  vector[P] theta = R_inv * theta_tilde;
}
