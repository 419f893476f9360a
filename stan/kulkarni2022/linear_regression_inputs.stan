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
// These are the factors p(z_x) p(z_y | z_x) of the joint Gaussian u_i = (z_x,i, z_y,i) ~ N(0, C),
//   C = [[Sigma + Sigma_*, Sigma theta], [theta' Sigma, theta' Sigma theta + sigma^2 + sigma_y^2]],
// so the log-likelihood of all users is -n/2 log|C| - tr(C^{-1} S)/2 + const with the scatter
// matrix S = sum_i u_i u_i' ((d + 1) x (d + 1)), formed once in transformed data (O(n d^2));
// each gradient then costs O(d^3), whatever n (ldp_linreg_inputs_scatter_lpdf; the same
// posterior as the per-user sum, tests/test_kulkarni2022_inputs_ss.py).
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
transformed data {
  matrix[d + 1, d + 1] S = crossprod(append_col(zx, zy));  // sum_i u_i u_i', u_i = (z_x,i, z_y,i)
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
  S ~ ldp_linreg_inputs_scatter(n, Sigma, theta, sigma, sigma_x, sigma_y);  // Eq. 34-41 summed over users
}
generated quantities {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
}
