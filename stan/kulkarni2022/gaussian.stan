// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally differentially private Bayesian
// inference". Sec. 3.2.1 (Eq. 6, rectified density), supplement Sec. 10.1 (Eq. 22-28,
// re-derived: Eq. 27 has typos), priors of Figure 8.
//
// Gaussian (mu, sigma) from locally perturbed reports, for R independent data sets in one
// run (the joint posterior is a product, so each (mu[r], sigma[r]) is an exact draw from
// its own posterior):
//   x_i ~ N(mu, sigma),  user i clips x_i to [a, b] and reports
//   z_i = clip(x_i, a, b) + Laplace(0, (b - a) / epsilon).
// Every latent x_i is marginalised in closed form (ldp_gauss_laplace_loglik, log space,
// stable for small and large epsilon and for z far outside [a, b]). The reports inside (a, b),
// whose terms are the whole cost of a gradient, go through ldp_gauss_mid_linear below: the same
// sum as ldp_gauss_laplace_mid with the report-only factors e^{-+(z - m)/beta} formed once in
// transformed data: 16 elementwise operations per report, 3 of them transcendental (2 Phi
// and 1 log) instead of 5 (tests/models/test_log_phi_gradients.py: the same log density as the
// former program at every point; benchmarks/bench_kulkarni2022_full.py: the cost).
// Priors: mu ~ N(mu_prior_mean, mu_prior_sd), sigma ~ Gamma(shape, rate).
//
// Privacy: each report is epsilon-LDP (the L1 sensitivity of clip(x) is b - a for any two
// inputs); the posterior is post-processing of the reports. Releases without a seed add
// discrete Laplace noise on a power-of-two grid; the continuous Laplace likelihood is
// then within g/(2 beta) per report of the exact one, up to a constant (pystanprivacy.noise).
functions {
#include log_phi.stanfunctions
#include ldp.stanfunctions

  /**
   * Sum over the reports a < z < b of log(2 beta Pr[z]) (the terms of ldp_gauss_laplace_mid),
   * with m = (a + b) / 2, e1 = e^{-(z - m)/beta} and e2 = e^{(z - m)/beta} given (data):
   *   2 beta Pr[z] = e^{C1 - m/beta} e1 (1 + e^{k1} D1) + e^{C2 + m/beta} e2 (1 + e^{k2} D2)
   * (C1, C2, k1, k2, D1, D2 as in ldp_gauss_laplace_mid; D1, D2 >= 0 from the tail where they do
   * not cancel). Both weights are scaled by e^{-K}, K the larger log weight, so the sum is at
   * least e^{-g}, g = (b - a)/(2 beta) (no underflow while g < 300), and no product exceeds
   * e^{max(k1, k2) + g} (no overflow while that is below e^700); otherwise ldp_gauss_laplace_mid
   * (its fast path while k1, k2 < 690, else every term on the log scale).
   */
  real ldp_gauss_mid_linear(vector z_mid, vector e1, vector e2, real m, real mu, real sigma,
                            real a, real b, real beta) {
    int n_mid = num_elements(z_mid);
    real c = square(sigma) / beta;
    real h = 0.5 * square(sigma / beta);
    real lpa = logPhi((a - mu) / sigma);
    real lpb = logPhi((mu - b) / sigma);
    real C1 = lpa + a / beta;
    real C2 = lpb - b / beta;
    real k1 = mu / beta + h - C1;
    real k2 = -mu / beta + h - C2;
    real g = (b - a) / (2 * beta);
    if (g < 300 && fmax(k1, k2) + g < 700) {
      real L1 = C1 - m / beta;
      real L2 = C2 + m / beta;
      real K = fmax(L1, L2);
      real u0 = (a - mu - c) / sigma;
      real v1 = (b - mu + c) / sigma;
      vector[n_mid] t = z_mid / sigma;
      vector[n_mid] D1 = u0 > 0 ? Phi(-u0) - Phi((mu + c) / sigma - t) : Phi(t - (mu + c) / sigma) - Phi(u0);
      vector[n_mid] D2 = v1 < 0 ? Phi(v1) - Phi(t - (mu - c) / sigma) : Phi((mu - c) / sigma - t) - Phi(-v1);
      return n_mid * K + sum(log(e1 .* (exp(L1 - K) + exp(L1 - K + k1) * D1)
                                 + e2 .* (exp(L2 - K) + exp(L2 - K + k2) * D2)));
    }
    return ldp_gauss_laplace_mid(z_mid, mu, sigma, a, b, beta, lpa, lpb, c, h);
  }
}
data {
  int<lower=1> R;                          // number of independent data sets
  array[R] int<lower=1> N;                 // users per data set
  vector[sum(N)] z;                        // reports, data set after data set
  real a;                                  // clipping interval [a, b]
  real<lower=a> b;
  real<lower=0> beta;                      // Laplace scale of the reports, from the release record
                                           // (= sensitivity/epsilon, or the discrete noise's scale)
  real mu_prior_mean;
  real<lower=0> mu_prior_sd;
  real<lower=0> sigma_prior_shape;
  real<lower=0> sigma_prior_rate;
}
transformed data {
  array[R] int n_lo = ldp_group_count(z, N, a, b, -1);
  array[R] int n_mid = ldp_group_count(z, N, a, b, 0);
  array[R] int n_hi = ldp_group_count(z, N, a, b, 1);
  vector[R] sum_lo = ldp_group_sum(z, N, a, b, -1);
  vector[R] sum_hi = ldp_group_sum(z, N, a, b, 1);
  vector[sum(n_mid)] z_mid = ldp_mid_values(z, a, b, sum(n_mid));
  array[R] int start = ldp_segment_starts(n_mid);
  real m = (a + b) / 2;
  vector[sum(n_mid)] e1 = exp(-(z_mid - m) / beta);   // report-only factors of ldp_gauss_mid_linear
  vector[sum(n_mid)] e2 = exp((z_mid - m) / beta);
}
parameters {
  vector[R] mu;
  vector<lower=0>[R] sigma;
}
model {
  mu ~ normal(mu_prior_mean, mu_prior_sd);
  sigma ~ gamma(sigma_prior_shape, sigma_prior_rate);
  for (r in 1:R) {
    // the reports outside (a, b): O(1) through their count and sum
    target += ldp_gauss_laplace_loglik(rep_vector(0, 0), n_lo[r], sum_lo[r], n_hi[r], sum_hi[r],
                                       mu[r], sigma[r], a, b, beta);
    if (n_mid[r] > 0) {
      target += -n_mid[r] * log(2 * beta)
                + ldp_gauss_mid_linear(segment(z_mid, start[r], n_mid[r]), segment(e1, start[r], n_mid[r]),
                                       segment(e2, start[r], n_mid[r]), m, mu[r], sigma[r], a, b, beta);
    }
  }
}
