// A survey proportion per region from randomised-response answers (pystanprivacy gallery).
//
// Each respondent in region g holds a private yes/no answer x_i ~ Bernoulli(p_g) and reports it
// through randomised response (epsilon-local DP): the true bit with probability
// p_keep = e^epsilon / (1 + e^epsilon) (the record's details["p_keep"], data name dp_p_keep),
// else the flipped bit. The regions' proportions come from a logit-normal population:
//   mu ~ N(-1.4, 0.5),  tau ~ N+(0, 0.5),  z_g ~ N(0, 1),  p_g = inv_logit(mu + tau z_g).
// Given p_g, the reports are independent Bernoulli(q_g) with
//   q_g = p_keep p_g + (1 - p_keep) (1 - p_g)
// (the true bit summed out), so the number of "yes" reports in region g is exactly
// Binomial(n_g, q_g): the noise-aware likelihood is exact, secure or seeded release alike.
// noise_aware = 0 is the naive fit: the reports taken as the true answers (q_g = p_g).
data {
  int<lower=1> G;                                  // regions (public)
  int<lower=1> dp_size;                            // reports: one per respondent
  array[dp_size] int<lower=0, upper=1> dp_y;       // the released reports
  array[dp_size] int<lower=1, upper=G> region;     // each respondent's region (public)
  real<lower=0.5, upper=1> dp_p_keep;              // the record's p_keep
  int<lower=0, upper=1> noise_aware;               // 1: noise-aware; 0: naive
}
transformed data {
  array[G] int n = rep_array(0, G);                // respondents per region
  array[G] int yes = rep_array(0, G);              // "yes" reports per region
  for (i in 1:dp_size) {
    n[region[i]] += 1;
    yes[region[i]] += dp_y[i];
  }
}
parameters {
  real mu;
  real<lower=0> tau;
  vector[G] z;
}
transformed parameters {
  vector<lower=0, upper=1>[G] p = inv_logit(mu + tau * z);
}
model {
  mu ~ normal(-1.4, 0.5);
  tau ~ normal(0, 0.5);
  z ~ std_normal();
  if (noise_aware) {
    yes ~ binomial(n, dp_p_keep * p + (1 - dp_p_keep) * (1 - p));
  } else {
    yes ~ binomial(n, p);
  }
}
