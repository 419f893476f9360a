// Bernstein & Sheldon (2018), "Differentially Private Bayesian Inference for Exponential
// Families", NeurIPS. Sec. 3.1-3.2 (Laplace release of every sufficient statistic; CLT,
// Eq. 1; Laplace noise as a scale mixture of normals, Park & Casella 2008); Sec. 4
// (Dirichlet-multinomial model).
//
// Noise-aware posterior of category probabilities theta (K-simplex) from noisy counts, for R
// independent data sets in one run (product target; each theta[r] is an exact draw from its
// own posterior):
//
//   theta ~ Dirichlet(prior_alpha)
//   s | theta ~ N(n theta, n (diag(theta) - theta theta'))  (CLT; singular: the counts sum
//                                                            to n, K - 1 free components)
//   y_k | s ~ Laplace(s_k, scale) independently for k = 1..K, scale = 2 / epsilon
//
// Each Laplace noise is written exactly as a scale mixture, e_k | v_k ~ N(0, v_k) with
// v_k ~ Exponential(rate 1 / (2 scale^2)); the counts s are then marginalised analytically,
// y | theta, v ~ N(n theta, n (diag(theta) - theta theta') + diag(v)), whose covariance is
// positive definite (O(K) density: multinomial_clt_noisy_lpdf). The standardised mixing
// variances w_k = v_k / (2 scale^2) ~ Exponential(1) are parameterised by their total
// w_total ~ Gamma(K, 1) and shares w_share ~ Dirichlet(1, ..., 1), independent a priori (an
// exact reparameterisation; for large n only the total is informed).
//
// theta is parameterised by its additive log-ratios eta_k = log(theta_k / theta_K),
// theta = softmax([eta, 0]) (log Jacobian sum_k log theta_k, so prior + Jacobian =
// sum_k prior_alpha_k log theta_k), with an affine offset/multiplier per data set computed
// from the release (eta_loc, eta_scale: a rough posterior location and sd). This changes
// nothing in the posterior; it only keeps the unconstrained parameters O(1) for every n, so
// NUTS adapts as quickly at n = 1e6 (posterior sd of theta ~ 1e-3) as at n = 100. Nothing
// else depends on n: the cost per gradient does not grow with the population.
//
// Privacy: y is the epsilon-DP Laplace release of the K category counts, replace-one
// neighbours with n public (changing one record moves one unit between two counts: L1
// sensitivity 2), independent noise on every count. The fit is post-processing.
functions {
#include expfam_clt.stanfunctions
}
data {
  int<lower=1> R;                       // number of independent data sets
  int<lower=2> K;                       // number of categories
  int<lower=1> n;                       // public number of records per data set
  array[R] vector[K] y;                 // released noisy counts (not projected)
  real<lower=0> scale;                  // Laplace scale = 2 / epsilon
  vector<lower=0>[K] prior_alpha;       // Dirichlet prior
  matrix[R, K - 1] eta_loc;             // numerical conditioning only (see header)
  matrix<lower=0>[R, K - 1] eta_scale;
}
parameters {
  matrix<offset=eta_loc, multiplier=eta_scale>[R, K - 1] eta;  // log(theta_k / theta_K)
  vector<lower=0>[R] w_total;           // sum_k v_k / (2 scale^2)
  array[R] simplex[K] w_share;          // v_k / sum_k v_k (uniform on the simplex a priori)
}
model {
  real two_b2 = 2 * square(scale);
  w_total ~ gamma(K, 1);
  for (r in 1:R) {
    vector[K] log_theta = log_softmax(append_row(eta[r]', 0));
    target += dot_product(prior_alpha, log_theta);  // Dirichlet prior + log Jacobian
    y[r] ~ multinomial_clt_noisy(exp(log_theta), n, (two_b2 * w_total[r]) * w_share[r]);
  }
}
generated quantities {
  array[R] simplex[K] theta;
  for (r in 1:R) {
    theta[r] = softmax(append_row(eta[r]', 0));
  }
}
