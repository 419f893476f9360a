// Bernstein & Sheldon (2018), "Differentially Private Bayesian Inference for Exponential
// Families", NeurIPS. Sec. 3.1-3.2 (Laplace release of the sufficient statistic; CLT
// approximation p(s | theta) ~ N(n mu, n Sigma), Eq. 1); Sec. 4 (beta-binomial model).
//
// Noise-aware posterior p(theta | y) of a binomial proportion, for R independent data sets
// in one run (the joint target is the product of the R posteriors, so every theta[r] is an
// exact draw from its own posterior):
//
//   theta ~ Beta(prior_alpha, prior_beta)
//   s | theta ~ N(n theta, n theta (1 - theta))            (CLT, Eq. 1)
//   y | s ~ Laplace(s, scale),  scale = 1 / epsilon         (sensitivity of s = sum x is 1)
//
// s is marginalised analytically: y | theta is normal-Laplace (closed form, log space), so
// the cost per gradient does not depend on n. The paper's Gibbs sampler (Algorithm 1) targets
// the same posterior through the Bayesian-lasso augmentation instead.
//
// Privacy: y is the epsilon-DP Laplace release of s = sum_i x_i, x_i in {0, 1}, replace-one
// neighbours (n public), L1 sensitivity 1. The fit sees only y and public constants, so every
// draw and summary is post-processing of an epsilon-DP release.
functions {
#include log_phi.stanfunctions
#include normal_laplace.stanfunctions
}
data {
  int<lower=1> R;                       // number of independent data sets
  int<lower=1> n;                       // public number of records per data set
  vector[R] y;                          // released noisy counts (not projected)
  real<lower=0> scale;                  // Laplace scale = sensitivity / epsilon = 1 / epsilon
  real<lower=0> prior_alpha;            // Beta prior
  real<lower=0> prior_beta;
}
parameters {
  vector<lower=0, upper=1>[R] theta;
}
model {
  theta ~ beta(prior_alpha, prior_beta);
  for (r in 1:R) {
    y[r] ~ normal_laplace(n * theta[r], sqrt(n * theta[r] * (1 - theta[r])), scale);
  }
}
