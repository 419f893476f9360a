// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially Private Bayesian
// Inference". Sec. 3.1.2, supplement Sec. 7 (Chebyshev / PASS-GLM statistics, Eq. 12),
// Sec. 13.2 (Lemma 13.1, Corollary 13.1), Sec. 13.1 (normal approximation), Sec. 8 (priors).
//
// Noise-aware Bayesian logistic regression from locally perturbed approximate sufficient
// statistics. Statistics (Sec. 7 Eq. 12 with M = 2, Sec. 13.2): with y in {-1, 1} the degree-2
// Chebyshev expansion log sigmoid(s) ~ a0 + a1 s + a2 s^2 at s = y x' theta gives the
// log-likelihood a0 + a1 theta' (y x) + a2 theta' (x x') theta (y^2 = 1), so
// t(x, y) = [1, vec(x x') y^2, x y] of Huggins et al. (2017) is sufficient. Every user sends
//   s_i = [y x, t2(x)] + N(0, diag(sigma_yx^2 I_d, sigma_t2^2 I)),  ||x_i|| <= R,
// t2(x) = [x_1^2 .. x_d^2, sqrt(2) x_j x_k (j < k)]: the distinct entries of vec(x x'), with
// ||t2(x) - t2(x')|| = ||x x' - x' x'^T||_F, the quantity Lemma 13.1 bounds (its sensitivity
// sqrt(sigma_2^2 / (2 sigma_1^2) + 2 R^2 + 2 R^4 sigma_1^2 / sigma_2^2) is attained). The
// aggregator sums the reports. Model: x ~ N(0, Sigma), P(y = 1 | x) = inv_logit(x' theta),
//   z_sum ~ N(n mu_s, n (Sigma_s + Sigma_*))                                 (Sec. 13.1)
// MOMENT APPROXIMATION USED: mu_s, Sigma_s are the EXACT mean and covariance of one s_i under
// this logistic model (not the moments under the Chebyshev-approximated likelihood; the
// Chebyshev expansion only decides which statistics are released). Write t = x' theta ~
// N(0, s^2), c = Sigma theta, g(t) = E[y | t] = tanh(t / 2). Decomposing x = c t / s^2 + u
// (u independent of t, Gaussian) gives, by Stein's lemma,
//   E[x g(t)] = e1 c,  E[x_j x_k x_l g(t)] = e1 (c_j Sigma_kl + c_k Sigma_jl + c_l Sigma_jk) + e3 c_j c_k c_l,
// e1 = E[g'(t)], e3 = E[g'''(t)], computed on a fixed standard-normal quadrature grid
// (xi, omega); y^2 = 1 gives E[y^2 x x'] = Sigma, and the t2 moments follow from Isserlis.
// The only approximations: (1) the normal (CLT) law of the sum, (2) the quadrature of e1, e3
// (error < 1e-9, tested against scipy), (3) the Gaussian model of the (norm-clipped) features.
// The moments are checked against Monte Carlo in tests/test_kulkarni2022_regression_functions.py.
// Priors: theta ~ N(0, prior_theta_sd^2 I), Sigma = diag(tau) Omega diag(tau), Omega ~ LKJ,
// tau ~ N+(0, prior_tau_sd^2).
//
// Two exact parameterisations of the same posterior, chosen by the data flag sample_chol (as in
// linear_regression_ss.stan; pystanprivacy picks it from public quantities, see
// LogisticRegressionSS): 0 samples theta (best with weak data); 1 samples b = L_x' theta,
// L_x = diag(tau) L_Omega = chol(Sigma), so that Sigma theta = L_x b and theta' Sigma theta =
// b' b, the quantities the likelihood pins, are simple in the sampled coordinates;
// theta = L_x'^{-1} b, with the Jacobian log |det d theta / d b| = -sum(log(tau)) -
// sum(log(diag(L_Omega))) since the prior stays on theta. With weak data flag 1 is a funnel
// (the prior scale of b is proportional to tau). Checked against the former program
// (tests/stan/kulkarni_logreg_ss_centered.stan) in tests/test_kulkarni2022_ss_reparam.py.
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
  int<lower=0, upper=1> sample_chol;        // parameterisation (see above); same posterior
}
transformed data {
  int m2 = (d * (d + 1)) %/% 2;
  array[m2] int K = ldp_pair_index(d, 0, 1);
  array[m2] int L = ldp_pair_index(d, 0, 0);
  vector[m2] w = ldp_pair_weight(d, 0);
  vector[d + m2] noise_var = append_row(rep_vector(square(sigma_yx), d), rep_vector(square(sigma_t2), m2));
}
parameters {
  vector[d] v;                              // theta (sample_chol = 0) or b = L_x' theta (1)
  vector<lower=0>[d] tau;
  cholesky_factor_corr[d] L_Omega;
}
transformed parameters {
  vector[d] theta = sample_chol ? mdivide_right_tri_low(v', diag_pre_multiply(tau, L_Omega))' : v;
}
model {
  if (sample_chol) {
    target += -sum(log(tau)) - sum(log(diagonal(L_Omega)));   // log |det d theta / d b|
  }
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
