// TEST-ONLY REFERENCE: stan/kulkarni2022/linear_regression_inputs.stan as it was before the
// scatter-matrix likelihood (it evaluated every user's marginal p(z_x,i, z_y,i) with
// ldp_linreg_inputs_lpdf: O(n d) per gradient). Same model, same priors, same data block.
// tests/test_kulkarni2022_inputs_ss.py checks that both give the same posterior.
//
// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially Private Bayesian
// Inference". Sec. 3.2.3, supplement Sec. 12.1 (Eq. 34-41), Eq. 45 (input sensitivity 2R),
// Sec. 8 (priors).
//
// Noise-aware Bayesian linear regression from locally perturbed inputs. Every user sends
//   z_x = x + N(0, sigma_x^2 I)  (||x|| <= R, L2 sensitivity 2R, budget (1 - c) epsilon)
//   z_y = y + N(0, sigma_y^2)    (|y| <= R_y, sensitivity 2 R_y, budget c epsilon).
// Model: x ~ N(0, Sigma), y | x ~ N(x' theta, sigma^2) (Eq. 34). Every latent x_i, y_i is
// marginalised in closed form (Eq. 35-41):
//   p(z_x, z_y) = N(z_x; 0, Sigma + Sigma_*) N(z_y; theta' h, theta' A theta + sigma^2 + sigma_y^2),
//   h = Sigma (Sigma + Sigma_*)^{-1} z_x,  A = Sigma - Sigma (Sigma + Sigma_*)^{-1} Sigma.
// Vectorised over users (one Cholesky factor per gradient); the cost grows linearly in n.
// Priors as in linear_regression_ss.stan.
//
// Privacy: each user's (z_x, z_y) is (epsilon, delta)-LDP by basic composition of two analytic
// Gaussian mechanisms ((1 - c) epsilon, (1 - c) delta) and (c epsilon, c delta); the fit is
// post-processing.
functions {
#include ldp_regression.stanfunctions
}
data {
  int<lower=1> d;
  int<lower=1> n;
  matrix[n, d] zx;                   // perturbed features
  vector[n] zy;                      // perturbed targets
  real<lower=0> sigma_x;             // feature noise sd
  real<lower=0> sigma_y;             // target noise sd
  real<lower=0> prior_theta_sd;
  real<lower=0> prior_tau_sd;
  real<lower=0> prior_sigma_sd;
  real<lower=0> lkj_eta;
}
parameters {
  vector[d] theta;
  real<lower=0> sigma;
  vector<lower=0>[d] tau;
  cholesky_factor_corr[d] L_Omega;
}
model {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
  theta ~ normal(0, prior_theta_sd);
  tau ~ normal(0, prior_tau_sd);
  sigma ~ normal(0, prior_sigma_sd);
  L_Omega ~ lkj_corr_cholesky(lkj_eta);
  zy ~ ldp_linreg_inputs(zx, Sigma, theta, sigma, sigma_x, sigma_y);
}
generated quantities {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
}
