// Linear regression from noisy sufficient statistics (pystanprivacy gallery).
//
// The design is public: n records with covariate rows x_i = (1, t_i), X'X given as data. The
// outcomes y_i are private, clipped to [-B, B] and summarised by s = X'y (2 values) and y'y; the
// three are released together with the analytic Gaussian mechanism (record: dp_scale = its
// sigma). The model: y = X beta + e, e ~ N(0, sigma^2 I), so exactly
//   s ~ N(X'X beta, sigma^2 X'X),     RSS = y'y - s' (X'X)^-1 s ~ sigma^2 chi^2(n - 2),
// with RSS independent of s (Cochran), and y'y = s' (X'X)^-1 s + RSS. The noise-aware program
// keeps s (as X'X beta + sigma L w, L L' = X'X) and RSS / sigma^2 (c) as latent variables and
// adds the release's Gaussian noise to each statistic. Clipping is assumed not to bind (the
// simulator reports how often it does).
// noise_aware = 0 is the naive fit: the Gaussian likelihood written in the statistics,
//   log p(y | beta, sigma) = -n log sigma - (y'y - 2 beta' s + beta' X'X beta) / (2 sigma^2),
// with the noisy statistics plugged in as if they were exact.
data {
  int<lower=3> n;                    // records (public)
  matrix[2, 2] XtX;                  // X'X of the public design
  vector[3] dp_y;                    // released (X'y[1], X'y[2], y'y)
  real<lower=0> dp_scale;            // the Gaussian noise sigma of the release's record
  int<lower=0, upper=1> noise_aware; // 1: noise-aware; 0: naive
}
transformed data {
  matrix[2, 2] L = cholesky_decompose(XtX);
  matrix[2, 2] XtX_inv = inverse_spd(XtX);
  int K = noise_aware ? 1 : 0;
}
parameters {
  vector[2] beta;
  real<lower=0> sigma;
  vector[2 * K] w;                   // the exact X'y, standardised (noise-aware only)
  array[K] real<lower=0> c;          // RSS / sigma^2 (noise-aware only)
}
model {
  beta ~ normal(0, 0.5);
  sigma ~ lognormal(0, 0.25);
  if (noise_aware) {
    vector[2] s = XtX * beta + sigma * (L * w);
    w ~ std_normal();
    c[1] ~ chi_square(n - 2);
    dp_y[1:2] ~ normal(s, dp_scale);
    dp_y[3] ~ normal(quad_form(XtX_inv, s) + square(sigma) * c[1], dp_scale);
  } else {
    target += -n * log(sigma)
              - (dp_y[3] - 2 * dot_product(beta, dp_y[1:2]) + quad_form(XtX, beta)) / (2 * square(sigma));
  }
}
