// Test-only program (not a model): Stan's own messages print data values. Used by
// tests/test_hostile_stan.py to check that no exception, log line, warning or file made by a
// failing, interrupted or killed fit carries a private data value (issue 8, no privacy claim:
// the data here are a stand-in for raw private records).
//   mode 0: a normal posterior for mu (used for long runs that are interrupted or killed)
//   mode 1: transformed data rejects, printing x (fails when the data are loaded)
//   mode 2: the model block rejects, printing x (every initial value fails)
//   mode 3: transformed data and the model block print x, then it samples normally
data {
  int<lower=0, upper=3> mode;
  int<lower=0> N;
  vector[N] x;
}
transformed data {
  if (mode == 1) {
    reject("transformed data rejected x = ", x);
  }
  if (mode == 3) {
    print("transformed data x = ", x);
  }
}
parameters {
  real mu;
}
model {
  if (mode == 2) {
    reject("model rejected x = ", x);
  }
  if (mode == 3) {
    print("x = ", x);
  }
  x ~ normal(mu, 1);
  mu ~ normal(0, 10);
}
