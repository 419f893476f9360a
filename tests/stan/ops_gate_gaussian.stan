// Test-only target of known law for the OPS convergence gate (issue 53, item 12):
// benchmarks/ops_gate_false_refusal.py and tests/models/test_ops_gate.py. Not a model of the papers.
//
// separation = 0: x ~ N(mu, L L'), a D-dimensional Gaussian that NUTS samples well, so every
// refusal of the gate is a false refusal. separation > 0: the equal mixture of N(mu - separation, L L')
// and N(mu + separation, L L'); with separation large against the scale of L, NUTS cannot cross
// between the two modes, so chains that settle in different modes have not mixed and the gate
// must refuse them.
data {
  int<lower=1> D;
  vector[D] mu;
  cholesky_factor_cov[D] L;
  real<lower=0> separation;
}
parameters {
  vector[D] x;
}
model {
  target += log_mix(0.5, multi_normal_cholesky_lpdf(x | mu - separation, L),
                    multi_normal_cholesky_lpdf(x | mu + separation, L));
}
