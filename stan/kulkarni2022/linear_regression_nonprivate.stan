// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially Private Bayesian
// Inference", Sec. 4.6 / Figure 4: the non-private baseline.
//
// Bayesian linear regression on the clean (preprocessed, clipped) data:
//   y ~ N(x' theta, sigma^2), theta ~ N(0, prior_theta_sd^2 I), sigma ~ N+(0, prior_sigma_sd^2)
// (the priors of the private models).
//
// Privacy: none. This is a named NON-PRIVATE baseline: it sees the raw records.
data {
  int<lower=1> d;
  int<lower=1> n;
  matrix[n, d] x;
  vector[n] y;
  real<lower=0> prior_theta_sd;
  real<lower=0> prior_sigma_sd;
}
parameters {
  vector[d] theta;
  real<lower=0> sigma;
}
model {
  theta ~ normal(0, prior_theta_sd);
  sigma ~ normal(0, prior_sigma_sd);
  y ~ normal_id_glm(x, 0, theta, sigma);
}
