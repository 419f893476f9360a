// Bernstein & Sheldon (2018), "Differentially Private Bayesian Inference for Exponential
// Families", NeurIPS. Sec. 3.3 (truncation of unbounded sufficient statistics; sensitivity
// bound; random-sum CLT, Proposition 1; truncated moments, Lemma 1, Eq. 3-4; Algorithm 3);
// Sec. 4 (gamma-exponential model).
//
// Noise-aware posterior of an exponential rate theta from the noisy truncated sum, for R
// independent data sets in one run (product target; each theta[r] is an exact draw from its
// own posterior):
//
//   theta ~ Gamma(prior_shape, prior_rate)
//   x_i | theta ~ Exponential(theta), i = 1..n;  s_hat = sum_i x_i 1[a <= x_i <= b]
//   s_hat | theta ~ N(m, V),  [m, V] = RS-CLT(theta, n, a, b)      (Prop. 1, Lemma 1)
//   y | s_hat ~ Laplace(s_hat, scale),  scale = b / epsilon
//
// s_hat is marginalised analytically (normal-Laplace, log space); the lower and upper
// portions of the data, which the Gibbs sampler (Algorithm 2) instantiates only to make the
// theta update conjugate, are not needed here: the likelihood of theta is that of s_hat.
// The cost per gradient does not depend on n.
//
// Privacy: records outside the public bounds [a, b] (0 <= a < b, chosen without looking at
// the data) are dropped from the sum; the L1 sensitivity of s_hat is
// max(max_{[a,b]} |x|, b - a) = b (Sec. 3.3 bound), replace-one neighbours, n public. y is the
// epsilon-DP Laplace(b / epsilon) release of s_hat; the fit is post-processing.
functions {
#include log_phi.stanfunctions
#include normal_laplace.stanfunctions
#include expfam_clt.stanfunctions
}
data {
  int<lower=1> R;                       // number of independent data sets
  int<lower=1> n;                       // public number of records per data set
  vector[R] y;                          // released noisy truncated sums (not projected)
  real<lower=0> trunc_lower;            // public truncation bounds a < b
  real<lower=trunc_lower> trunc_upper;
  real<lower=0> scale;                  // Laplace scale = b / epsilon
  real<lower=0> prior_shape;            // Gamma prior on the rate
  real<lower=0> prior_rate;
}
parameters {
  vector<lower=0>[R] theta;
}
model {
  theta ~ gamma(prior_shape, prior_rate);
  for (r in 1:R) {
    vector[2] mv = rs_clt_truncated_exponential(theta[r], n, trunc_lower, trunc_upper);
    y[r] ~ normal_laplace(mv[1], sqrt(mv[2]), scale);
  }
}
