// Case counts and hospitalisations by region, published by a health agency with OpenDP
// (pystanprivacy gallery; the release is imported with pystanprivacy.interop.opendp).
//
// Each region g has public exposure E_g (thousand person-years) and a private list of cases;
// each case was hospitalised (1) or not (0). OpenDP 0.16 released, by region on public keys,
//   dp_y[g]  = max(0, n_g + K_g)   the number of cases, K_g ~ DLap(dp_scale) (dp.len(): the
//                                  noisy count is clamped at 0, record.details["clamped"]);
//   s_obs[g] = h_g + L_g           the number hospitalised, L_g ~ DLap(s_scale) (dp.sum((0, 1))),
// both exact discrete Laplace noise on the integers (OpenDP's "Integer Laplace").
// The model:  mu ~ N(log 4, 0.2), tau ~ N+(0, 0.2), z_g ~ N(0, 1),
//             lambda_g = exp(mu + tau z_g),  n_g ~ Poisson(E_g lambda_g),
//             theta ~ Beta(2, 8),  h_g | n_g ~ Binomial(n_g, theta).
// The noise-aware likelihood sums the true count out (up to the public bound max_count):
//   p(dp_y, s_obs) = sum_n Poisson(n | E lambda) P(dp_y | n) sum_h Binomial(h | n, theta) DLap(s_obs - h)
// with P(dp_y | n) = dp_discrete_laplace_censored_lpmf and DLap(s_obs - h) =
// dp_discrete_laplace_lpmf (both exact), evaluated once in transformed data with the binomial
// coefficients, so that each evaluation adds up about G max_count^2 / 2 precomputed terms; the
// only approximation is the omitted mass P(n > max_count) (opendp_health_sim.py states it).
// noise_aware = 0 is the naive fit: the released numbers taken as the true ones (the
// hospitalisations cut to [0, dp_y] so that the binomial is defined).
functions {
#include dp_noise.stanfunctions
}
data {
  int<lower=1> dp_size;                     // regions (= G)
  array[dp_size] int<lower=0> dp_y;         // released case counts (clamped at 0)
  real<lower=0> dp_scale;                   // their discrete Laplace scale (the record's)
  array[dp_size] int s_obs;                 // released hospitalisations
  real<lower=0> s_scale;                    // their scale (the hospitalisations' record)
  vector<lower=0>[dp_size] exposure;        // public
  int<lower=0> max_count;                   // public bound of every true count
  int<lower=0, upper=1> noise_aware;        // 1: noise-aware; 0: naive
}
transformed data {
  int M = max_count;
  vector[M + 1] ns = linspaced_vector(M + 1, 0, M);
  vector[M + 1] log_fact = lgamma(ns + 1);
  // count[g][n + 1] = log P(dp_y[g] | n): the clamped count's mass
  array[dp_size] vector[M + 1] count;
  // hosp[g][n + 1, h + 1] = log C(n, h) + log DLap(s_obs[g] - h), h <= n
  array[dp_size] matrix[M + 1, M + 1] hosp;
  // H[n + 1, h + 1] = h, R[n + 1, h + 1] = max(n - h, 0) (the binomial's exponents)
  matrix[M + 1, M + 1] H = rep_matrix(ns', M + 1);
  matrix[M + 1, M + 1] R = fmax(rep_matrix(ns, M + 1) - H, 0);
  for (g in 1:dp_size) {
    hosp[g] = rep_matrix(negative_infinity(), M + 1, M + 1);
    for (n in 0:M) {
      count[g][n + 1] = dp_discrete_laplace_censored_lpmf(dp_y[g] | n, dp_scale);
      for (h in 0:n) {
        hosp[g][n + 1, h + 1] = lchoose(n, h) + dp_discrete_laplace_lpmf(s_obs[g] | h, s_scale);
      }
    }
  }
}
parameters {
  real mu;
  real<lower=0> tau;
  vector[dp_size] z;
  real<lower=0, upper=1> theta;
}
transformed parameters {
  vector<lower=0>[dp_size] lambda = exp(mu + tau * z);
}
model {
  mu ~ normal(log(4), 0.2);
  tau ~ normal(0, 0.2);
  z ~ std_normal();
  theta ~ beta(2, 8);
  if (noise_aware) {
    real lt = log(theta);
    real l1t = log1m(theta);
    for (g in 1:dp_size) {
      real rate = exposure[g] * lambda[g];
      // the entries h > n are -inf in hosp (and 0 * log theta stays finite)
      matrix[M + 1, M + 1] terms = hosp[g] + lt * H + l1t * R;
      vector[M + 1] lp = ns * log(rate) - rate - log_fact + count[g];
      for (n in 0:M) {
        lp[n + 1] += log_sum_exp(terms[n + 1, 1:(n + 1)]);
      }
      target += log_sum_exp(lp);
    }
  } else {
    for (g in 1:dp_size) {
      dp_y[g] ~ poisson(exposure[g] * lambda[g]);
      min(max(s_obs[g], 0), dp_y[g]) ~ binomial(dp_y[g], theta);
    }
  }
}
