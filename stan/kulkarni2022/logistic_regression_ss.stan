// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially Private Bayesian
// Inference". Sec. 3.1.2, supplement Sec. 7 (Chebyshev / PASS-GLM statistics, Eq. 12),
// Sec. 13.2 (Lemma 13.1, Corollary 13.1), Sec. 13.1 (normal approximation), Sec. 8 (priors).
//
// Noise-aware Bayesian logistic regression from locally perturbed approximate sufficient
// statistics. With y in {-1, 1}, the degree-2 Chebyshev expansion of log sigmoid(y x' theta)
// makes s = [y x, t2(x)] sufficient (Huggins et al. 2017). Every user sends
//   s_i + N(0, diag(sigma_yx^2 I_d, sigma_t2^2 I)),  ||x_i|| <= R  (Lemma 13.1);
// the aggregator sums the reports. Model: x ~ N(0, Sigma), P(y = 1 | x) = inv_logit(x' theta),
//   z_sum ~ N(n mu_s, n (Sigma_s + Sigma_*))                                 (Sec. 13.1)
// with mu_s, Sigma_s the mean and covariance of one s_i under this model. They are exact up
// to a 1-d quadrature: write t = x' theta ~ N(0, s^2), c = Sigma theta, g(t) = E[y | t] =
// tanh(t / 2). Decomposing x = c t / s^2 + u (u independent of t, Gaussian) gives
//   E[x g(t)] = e1 c,  E[x_j x_k x_l g(t)] = e1 (c_j Sigma_kl + c_k Sigma_jl + c_l Sigma_jk) + e3 c_j c_k c_l,
// e1 = E[g'(t)], e3 = E[g'''(t)] (Stein's lemma), computed on a fixed quadrature grid
// (xi, omega); y^2 = 1 gives E[y^2 x x'] = Sigma, and the t2 moments follow from Isserlis.
// Approximations: the CLT normal for the sum, the quadrature (error < 1e-9, tested), and the
// Gaussian model of the (clipped) features; the statistics themselves are sufficient only
// under the Chebyshev approximation of the log-likelihood.
// Priors: theta ~ N(0, prior_theta_sd^2 I), Sigma = diag(tau) Omega diag(tau), Omega ~ LKJ,
// tau ~ N+(0, prior_tau_sd^2).
//
// Privacy: each report is (epsilon, delta)-LDP by the analytic Gaussian mechanism with the L2
// sensitivity of Lemma 13.1; the sum and the fit are post-processing.
functions {
#include ldp_regression.stanfunctions
}
data {
  int<lower=1> d;
  int<lower=1> n;
  vector[d + (d * (d + 1)) %/% 2] z_sum;    // sum of the n noisy reports [y x, t2(x)]
  real<lower=0> sigma_yx;                   // noise sd of y x (sigma_1 of Lemma 13.1)
  real<lower=0> sigma_t2;                   // noise sd of t2(x) (sigma_2)
  int<lower=1> n_quad;
  vector[n_quad] quad_x;                    // standard-normal quadrature nodes
  simplex[n_quad] quad_w;                   // their weights
  real<lower=0> prior_theta_sd;
  real<lower=0> prior_tau_sd;
  real<lower=0> lkj_eta;
}
transformed data {
  int m2 = (d * (d + 1)) %/% 2;
  array[m2] int K = ldp_pair_index(d, 0, 1);
  array[m2] int L = ldp_pair_index(d, 0, 0);
  vector[m2] w = ldp_pair_weight(d, 0);
  vector[d + m2] noise_var = append_row(rep_vector(square(sigma_yx), d), rep_vector(square(sigma_t2), m2));
}
parameters {
  vector[d] theta;
  vector<lower=0>[d] tau;
  cholesky_factor_corr[d] L_Omega;
}
model {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
  vector[2] e = ldp_logit_stein(sqrt(quad_form(Sigma, theta)), quad_x, quad_w);
  theta ~ normal(0, prior_theta_sd);
  tau ~ normal(0, prior_tau_sd);
  L_Omega ~ lkj_corr_cholesky(lkj_eta);
  z_sum ~ ldp_ss_normal(n, ldp_logreg_ss_mean(Sigma, theta, K, L, w, e),
                        ldp_logreg_ss_cov(Sigma, theta, K, L, w, e), noise_var);
}
generated quantities {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
}
