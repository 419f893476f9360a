// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially Private Bayesian
// Inference". Sec. 3.2.3, supplement Sec. 12.2 (Eq. 42-44), Sec. 7 (Chebyshev, Eq. 12),
// Eq. 45 (input sensitivity 2R), Sec. 8 (priors).
//
// Noise-aware Bayesian logistic regression from locally perturbed inputs. Every user sends
//   z_x = x + N(0, sigma_x^2 I)           (||x|| <= R, L2 sensitivity 2R, budget (1 - c) epsilon)
//   z_y = randomised response of y in {0, 1}, kept with p_keep = e^{c eps} / (1 + e^{c eps}).
// Model (Eq. 42): x ~ N(0, Sigma), y | x ~ Bernoulli(inv_logit(x' theta)). The latent x_i, y_i
// are marginalised: x | z_x ~ N(h, A) exactly, y is summed out, and the sigmoid expectation
// E[inv_logit(x' theta) | z_x] uses the degree-2 Chebyshev polynomial of the sigmoid on
// [-cheb_radius, cheb_radius] (Eq. 44), clipped to [0, 1]. The features' term
// sum_i log N(z_x,i; 0, Sigma + sigma_x^2 I) depends on the data only through their scatter
// matrix Sx = sum_i z_x,i z_x,i', formed once in transformed data, so it costs O(d^3) per
// gradient; the labels' term stays a vectorised per-user sum (O(n d)). The same posterior as
// the former per-user program (tests/models/test_kulkarni2022_inputs_ss.py).
//
// Coordinates of tau (data flag signed_tau, the same posterior either way): 0 samples log(tau),
// tau ~ N+(0, prior_tau_sd^2); 1 samples a signed tau ~ N(0, prior_tau_sd^2) with no transform
// and Sigma = diag(tau) Omega diag(tau). Flipping the sign of tau_j flips row/column j of
// Omega, and LKJ is invariant to that, so (|tau|, Omega with those signs) has the prior above
// and Sigma the same posterior; only tau's signs and the matching entries of L_Omega are not
// identified (check theta and Sigma, not tau or L_Omega). When the feature noise swamps
// Var(x) the features' term caps tau from above: a wall that is steep in log(tau), gentle in
// tau (benchmarks/README.md: half the leapfrog steps at epsilon = 0.25, more ESS per second).
//
// Privacy: (epsilon, delta)-LDP per user by basic composition of the analytic Gaussian
// mechanism ((1 - c) epsilon, delta) on x and randomised response (c epsilon, 0) on y; the fit
// is post-processing.
functions {
#include ldp_regression.stanfunctions
}
data {
  int<lower=1> d;
  int<lower=1> n;
  matrix[n, d] zx;                          // perturbed features
  array[n] int<lower=0, upper=1> zy;        // randomised-response labels
  real<lower=0> sigma_x;                    // feature noise sd
  real<lower=0.5, upper=1> p_keep;          // RR keep probability
  vector[3] cheb;                           // sigmoid(t) ~ cheb[1] + cheb[2] t + cheb[3] t^2
  real<lower=0> prior_theta_sd;
  real<lower=0> prior_tau_sd;
  real<lower=0> lkj_eta;
  int<lower=0, upper=1> signed_tau;         // 1: tau unconstrained and signed (see above)
}
transformed data {
  matrix[d, d] Sx = crossprod(zx);          // sum_i z_x,i z_x,i'
}
parameters {
  vector[d] theta;
  vector<lower=(signed_tau ? negative_infinity() : 0)>[d] tau;   // lower -inf: no transform
  cholesky_factor_corr[d] L_Omega;
}
model {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
  theta ~ normal(0, prior_theta_sd);
  tau ~ normal(0, prior_tau_sd);
  L_Omega ~ lkj_corr_cholesky(lkj_eta);
  zy ~ ldp_logreg_inputs_scatter(zx, Sx, Sigma, theta, sigma_x, p_keep, cheb);  // Eq. 42-44
}
generated quantities {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
}
