// The naive counterpart of poisson_rate.stan: it ignores the noise, taking each released count
// (rounded, negatives set to 0) as if it were the true count. Same prior, same parameters; its
// posterior is too narrow and off-centre when the noise is not small against the counts, and
// simulation-based calibration (pystanprivacy sbc) shows it.
data {
  int<lower=1> dp_size;
  vector[dp_size] dp_y;
  vector<lower=0>[dp_size] exposure;
  int<lower=0> max_count;          // unused (declared so that both programs read the same data file)
}
transformed data {
  array[dp_size] int counts;
  for (g in 1:dp_size) {
    counts[g] = to_int(fmax(round(dp_y[g]), 0));
  }
}
parameters {
  real mu;
  real<lower=0> tau;
  vector[dp_size] z;
}
transformed parameters {
  vector[dp_size] lambda = exp(mu + tau * z);
}
model {
  mu ~ normal(log(5), 0.3);
  tau ~ normal(0, 0.2);
  z ~ std_normal();
  counts ~ poisson(exposure .* lambda);
}
