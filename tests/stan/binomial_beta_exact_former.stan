// Test-only program: stan/bernstein2018/binomial_beta_exact.stan as it was before 2026-12-05,
// i.e. with the Laplace-binomial likelihood written inline instead of through
// dp_binomial_laplace_weights / dp_binomial_from_weights of stan/functions/dp_noise.stanfunctions.
// tests/models/test_noise_functions.py checks that the model gives the same log density,
// gradient and draws bit for bit.
//
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
//
// Privacy: y is the epsilon-DP Laplace release of s = sum_i x_i, x_i in {0, 1}, replace-one
// neighbours (n public), L1 sensitivity 1, scale = 1 / epsilon; the fit is post-processing.
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
  vector[n + 1] s = linspaced_vector(n + 1, 0, n);
  array[R] vector[n + 1] log_c;
  {
    vector[n + 1] log_choose;
    for (i in 0:n) {
      log_choose[i + 1] = lchoose(n, i);
    }
    for (r in 1:R) {
      log_c[r] = log_choose - log(2 * scale) - abs(y[r] - s) / scale;
    }
  }
}
parameters {
  vector<lower=0, upper=1>[R] theta;
}
model {
  theta ~ beta(prior_alpha, prior_beta);
  // sum_s C(n,s) theta^s (1-theta)^(n-s) Laplace(y | s) = (1-theta)^n sum_s exp(log_c + s logit(theta))
  for (r in 1:R) {
    target += n * log1m(theta[r]) + log_sum_exp(log_c[r] + s * logit(theta[r]));
  }
}
