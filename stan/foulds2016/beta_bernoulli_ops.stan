// Foulds, Geumlek, Welling & Chaudhuri (2016), "On the theory and practice of
// privacy-preserving Bayesian data analysis", UAI. Section 3.1, Eq. 10, 14 and 15.
//
// One-posterior sampling (OPS): the truncated beta-Bernoulli posterior, p in
// [a0, 1 - a0], sampled at temperature T (Eq. 14), for R independent data sets at once
// (the joint target is a product, so each p[r] is an exact draw from its own target):
//
//   f(p | X) ∝ [ p^(n_+ + alpha - 1) (1 - p)^(n_- + beta - 1) ]^(1 / T),  a0 <= p <= 1 - a0
//
// Privacy: the log-likelihood sensitivity of the truncated model is
// Delta = log((1 - a0) / a0) (Eq. 15); with T = max(1, 2 Delta / epsilon) one draw from
// the converged target is epsilon-DP (exponential mechanism, Theorem 2 / Eq. 10).
// The guarantee holds only for a draw from the exact target: the Python driver releases a
// draw only after the convergence checks pass.
data {
  int<lower=1> R;
  vector<lower=0>[R] successes;         // exact counts n_+ (OPS sees the raw data)
  vector<lower=0>[R] failures;          // exact counts n_-
  real<lower=0> prior_alpha;
  real<lower=0> prior_beta;
  real<lower=0, upper=0.5> a0;          // truncation point, 0 < a0 < 1/2
  real<lower=1> temperature;            // T >= 1
}
parameters {
  vector<lower=a0, upper=1 - a0>[R] p;
}
model {
  // tempered log joint (Eq. 14); the truncation is the parameter's support
  target += ((successes + prior_alpha - 1) .* log(p)
             + (failures + prior_beta - 1) .* log1m(p)) / temperature;
}
