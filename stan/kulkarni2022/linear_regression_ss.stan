// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially Private Bayesian
// Inference". Sec. 3.1.1 (Eq. 3, Lemma 3.1, Corollary 3.1), supplement Sec. 8 (priors),
// Sec. 9.1 and 13.1.
//
// Noise-aware Bayesian linear regression from locally perturbed sufficient statistics.
// Every user i holds (x_i, y_i) with ||x_i||_2 <= R, |y_i| <= R_y and sends
//   s_i + zeta_i,  s_i = [t2(x_i), y_i x_i, y_i^2],  zeta_i ~ N(0, diag(sigma_t2^2 I, sigma_xy^2 I, sigma_yy^2)),
// t2 as in stan/functions/ldp_regression.stanfunctions (off-diagonal products scaled by sqrt(2)).
// The aggregator sums the reports: z_sum = sum_i (s_i + zeta_i). Model:
//   x ~ N(0, Sigma),  y | x ~ N(x' theta, sigma^2)                    (Eq. 10-11)
//   z_sum ~ N(n mu_s, n (Sigma_s + Sigma_*))                           (Eq. 3, Sec. 13.1)
// where mu_s, Sigma_s are the exact mean and covariance of one s_i: u = (x, y) is Gaussian
// with covariance C = [[Sigma, Sigma theta], [theta' Sigma, theta' Sigma theta + sigma^2]],
// every entry of s is w_a u_I u_J, so E[s_a] = w_a C_IJ and, by Isserlis' theorem,
// Cov(s_a, s_b) = w_a w_b (C_{I_a I_b} C_{J_a J_b} + C_{I_a J_b} C_{J_a I_b}). The only
// approximation is the CLT normal for the sum of the n statistics (and the Gaussian model of
// clipped data). The cost of a gradient does not depend on n.
// Priors (Figure 8 / Sec. 8): theta ~ N(0, prior_theta_sd^2 I), Sigma = diag(tau) Omega diag(tau),
// Omega ~ LKJ(lkj_eta), tau ~ N+(0, prior_tau_sd^2); sigma ~ N+(0, prior_sigma_sd^2) (not
// stated in the paper).
//
// Two exact parameterisations of the same posterior of (theta, sigma, Sigma), chosen by the data
// flag sample_chol (pystanprivacy picks it from public quantities, see LinearRegressionSS):
//  0: theta and log(sigma) are sampled (the prior's coordinates). Best when the data are weak.
//  1: with many users the likelihood pins C, and in (theta, sigma, tau, L_Omega) the set
//     C ~ C_hat is a curved ridge (Sigma theta = C[1:d, d+1] couples theta and Sigma). The
//     sampler then moves on the Cholesky factor of C,
//       chol(C) = [[L_x, 0], [b', sigma]],  L_x = diag(tau) L_Omega = chol(Sigma),  b = L_x' theta
//     (L_x b = Sigma theta, b' b + sigma^2 = theta' Sigma theta + sigma^2), a smooth bijection of
//     C: b is sampled and theta = L_x'^{-1} b (a triangular solve). The prior is still on theta,
//     so the density carries the Jacobian of b -> theta,
//       log |det d theta / d b| = log |det L_x'^{-1}| = -sum(log(tau)) - sum(log(diag(L_Omega))).
//     sigma = k log(1 + exp(sigma_raw)), k = prior_sigma_sd / 100 (Jacobian log k +
//     log_inv_logit(sigma_raw)): sigma^2 = C_yy - b' b is then nearly Gaussian with a sharp upper
//     edge, which log(sigma) squeezes (small steps, divergences there); the softplus is linear
//     above k. With weak data flag 1 is a funnel (the prior scale of b is proportional to tau),
//     so it is only used when the data pin Sigma.
// tests/test_kulkarni2022_ss_reparam.py checks both flags against the former program
// (tests/stan/kulkarni_linreg_ss_centered.stan) and the Jacobian against the prior.
//
// Privacy: each report is (epsilon, delta)-LDP by the analytic Gaussian mechanism with the
// L2 sensitivity of Lemma 3.1 (replace-one, one user); the sum and this fit are
// post-processing, so every draw is (epsilon, delta)-LDP for every user.
functions {
#include ldp_regression.stanfunctions
}
data {
  int<lower=1> d;                                  // number of features
  int<lower=1> n;                                  // number of users (public)
  vector[(d * (d + 1)) %/% 2 + d + 1] z_sum;       // sum of the n noisy reports
  real<lower=0> sigma_t2;                          // noise sd of the t2(x) entries (sigma_1)
  real<lower=0> sigma_xy;                          // noise sd of the y x entries (sigma_2)
  real<lower=0> sigma_yy;                          // noise sd of y^2 (sigma_3)
  real<lower=0> prior_theta_sd;
  real<lower=0> prior_tau_sd;
  real<lower=0> prior_sigma_sd;
  real<lower=0> lkj_eta;
  int<lower=0, upper=1> sample_chol;               // parameterisation (see above); same posterior
}
transformed data {
  int m2 = (d * (d + 1)) %/% 2;
  int m = m2 + d + 1;
  array[m] int I = ldp_pair_index(d, 1, 1);
  array[m] int J = ldp_pair_index(d, 1, 0);
  vector[m] w = ldp_pair_weight(d, 1);
  real sigma_k = prior_sigma_sd / 100;             // softplus scale of sigma when sample_chol
  vector[m] noise_var = append_row(rep_vector(square(sigma_t2), m2),
                                   append_row(rep_vector(square(sigma_xy), d), square(sigma_yy)));
}
parameters {
  vector[d] v;                       // theta (sample_chol = 0) or b = L_x' theta (sample_chol = 1)
  real sigma_raw;                    // log(sigma) or softplus^{-1}(sigma / sigma_k)
  vector<lower=0>[d] tau;
  cholesky_factor_corr[d] L_Omega;
}
transformed parameters {
  vector[d] theta;
  real<lower=0> sigma;
  if (sample_chol) {
    theta = mdivide_right_tri_low(v', diag_pre_multiply(tau, L_Omega))';   // theta' = b' L_x^{-1}
    sigma = sigma_k * log1p_exp(sigma_raw);
  } else {
    theta = v;
    sigma = exp(sigma_raw);
  }
}
model {
  matrix[d + 1, d + 1] L_C = rep_matrix(0, d + 1, d + 1);
  L_C[1:d, 1:d] = diag_pre_multiply(tau, L_Omega);
  L_C[d + 1, 1:d] = sample_chol ? v' : theta' * L_C[1:d, 1:d];            // b' = theta' L_x
  L_C[d + 1, d + 1] = sigma;
  // C = chol(C) chol(C)' = ldp_linreg_joint_cov(Sigma, theta, sigma)
  matrix[d + 1, d + 1] C = multiply_lower_tri_self_transpose(L_C);
  if (sample_chol) {
    target += -sum(log(tau)) - sum(log(diagonal(L_Omega)));               // log |det d theta / d b|
    target += log_inv_logit(sigma_raw);                                     // d sigma / d sigma_raw (/ k)
  } else {
    target += sigma_raw;                                                    // d sigma / d log(sigma)
  }
  theta ~ normal(0, prior_theta_sd);
  tau ~ normal(0, prior_tau_sd);
  sigma ~ normal(0, prior_sigma_sd);
  L_Omega ~ lkj_corr_cholesky(lkj_eta);
  z_sum ~ ldp_ss_normal(n, ldp_quadratic_mean(C, I, J, w), ldp_quadratic_cov(C, I, J, w), noise_var);
}
generated quantities {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
}
