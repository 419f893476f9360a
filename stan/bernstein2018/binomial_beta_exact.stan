// Bernstein & Sheldon (2018), "Differentially Private Bayesian Inference for Exponential
// Families", NeurIPS. Sec. 3.2: the exact p(s | theta) = Binomial(n, theta) (the paper notes
// it is available for the binomial but does not give a tractable Gibbs conditional); Sec. 4.
//
// Exact noise-aware posterior of a binomial proportion (no CLT), for R independent data
// sets in one run (product target; each theta[r] is an exact draw from its own posterior):
//
//   p(theta | y) ∝ Beta(theta | prior_alpha, prior_beta)
//                  * sum_{s=0}^{n} Binomial(s | n, theta) Laplace(y | s, scale)
//
// The sum is a log_sum_exp over n + 1 terms, so one gradient costs O(n): meant for moderate
// n (up to ~1e4) and as the reference the CLT model (binomial_beta.stan) is checked against.
// The likelihood is dp_binomial_laplace_lpdf of stan/functions/dp_noise.stanfunctions, split in
// two: dp_binomial_laplace_weights (the theta-free terms, once, in transformed data) and
// dp_binomial_from_weights (per gradient: no log-gamma).
//
// Privacy: y is the epsilon-DP Laplace release of s = sum_i x_i, x_i in {0, 1}, replace-one
// neighbours (n public), L1 sensitivity 1, scale = 1 / epsilon; the fit is post-processing.
functions {
#include dp_noise.stanfunctions
}
data {
  int<lower=1> R;                       // number of independent data sets
  int<lower=1> n;                       // public number of records per data set
  vector[R] y;                          // released noisy counts (not projected)
  real<lower=0> scale;                  // Laplace scale = 1 / epsilon
  real<lower=0> prior_alpha;            // Beta prior
  real<lower=0> prior_beta;
}
transformed data {
  // log C(n, s) + log Laplace(y[r] | s, scale) for s = 0..n: everything that is not theta
  array[R] vector[n + 1] log_w;
  for (r in 1:R) {
    log_w[r] = dp_binomial_laplace_weights(y[r], n, scale);
  }
}
parameters {
  vector<lower=0, upper=1>[R] theta;
}
model {
  theta ~ beta(prior_alpha, prior_beta);
  // sum_s C(n,s) theta^s (1-theta)^(n-s) Laplace(y | s) = (1-theta)^n sum_s exp(log_w + s logit(theta))
  for (r in 1:R) {
    target += dp_binomial_from_weights(log_w[r], n, theta[r]);
  }
}
