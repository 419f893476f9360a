// Foulds, Geumlek, Welling & Chaudhuri (2016), "On the theory and practice of
// privacy-preserving Bayesian data analysis", UAI. Section 3.2, Eq. 16-17.
//
// Beta posterior of a Bernoulli success probability p from success/failure counts,
// for R independent data sets in one run (the joint posterior is a product, so every
// p[r] is an exact draw from its own posterior; one run replaces R separate fits).
//
//   p[r] | counts ~ Beta(successes[r] + prior_alpha, failures[r] + prior_beta)
//
// Non-private: the counts are the exact sufficient statistics S(X) = (n_+, n_-).
// Laplace mechanism (Eq. 16): the counts are proj(S(X) + Laplace(2 / epsilon)^2), the
// L1 sensitivity of S(x) = [x, 1 - x] being 2 (Eq. 17), projected to be non-negative.
// The posterior treats the released counts as the statistics; it is post-processing of
// an epsilon-DP release, so every draw and summary is epsilon-DP.
data {
  int<lower=1> R;                       // number of independent data sets
  vector<lower=0>[R] successes;         // (noisy, projected) count of x = 1
  vector<lower=0>[R] failures;          // (noisy, projected) count of x = 0
  real<lower=0> prior_alpha;            // Beta prior
  real<lower=0> prior_beta;
}
parameters {
  vector<lower=0, upper=1>[R] p;
}
model {
  p ~ beta(successes + prior_alpha, failures + prior_beta);
}
