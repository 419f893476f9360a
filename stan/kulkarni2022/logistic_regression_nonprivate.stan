// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially Private Bayesian
// Inference", Sec. 4.6 / Figure 5: the non-private baseline.
//
// Bayesian logistic regression (no intercept, centred features, as the private models) on
// the clean (preprocessed, clipped) data: y ~ Bernoulli(inv_logit(x' theta)),
// theta ~ N(0, prior_theta_sd^2 I).
//
// Privacy: none. This is a named NON-PRIVATE baseline: it sees the raw records.
data {
  int<lower=1> d;
  int<lower=1> n;
  matrix[n, d] x;
  array[n] int<lower=0, upper=1> y;
  real<lower=0> prior_theta_sd;
}
parameters {
  vector[d] theta;
}
model {
  theta ~ normal(0, prior_theta_sd);
  y ~ bernoulli_logit_glm(x, 0, theta);
}
