// Test-only program: evaluates the beta-D Bernoulli loss and the network's output as
// stan/functions/betad.stanfunctions writes them (the labels split by position; the hidden
// biases inside one matrix product) next to their former forms, under fixed_param, for
// tests/models/test_jewson2023_speedups.py.
functions {
#include betad.stanfunctions
  // the former forms, as in stan/functions/betad.stanfunctions before the rewrite
  real betad_bernoulli_logit_former(vector y, vector eta, real beta) {
    real b = beta - 1;
    vector[rows(eta)] lp1 = log_inv_logit(eta);
    vector[rows(eta)] lp0 = log1m_inv_logit(eta);
    vector[rows(eta)] logf = y .* lp1 + (1 - y) .* lp0;
    vector[rows(eta)] a1 = beta * lp1;
    vector[rows(eta)] a0 = beta * lp0;
    vector[rows(eta)] log_int = fmax(a1, a0) + log1p_exp(-abs(a1 - a0));
    return sum(expm1(b * logf)) / b - sum(exp(log_int)) / beta;
  }
  vector nn_forward_former(matrix X, matrix W, vector b_in, vector w_out, real b_out) {
    return tanh(X * W + rep_matrix(b_in', rows(X))) * w_out + b_out;
  }
}
data {
  int<lower=1> N;
  int<lower=1> P;
  int<lower=1> H;
  matrix[N, P] X;
  array[N] int<lower=0, upper=1> y;
  real<lower=1> beta;
  matrix[P, H] W;
  vector[H] b_in;
  vector[H] w_out;
  real b_out;
}
transformed data {
  matrix[N, P + 1] X1 = append_col(rep_vector(1, N), X);
  array[sum(y)] int ones = betad_positions(y, 1);
  array[N - sum(y)] int zeros = betad_positions(y, 0);
}
generated quantities {
  vector[N] eta = nn_forward(X1, W, b_in, w_out, b_out);
  vector[N] eta_former = nn_forward_former(X, W, b_in, w_out, b_out);
  real loss = betad_bernoulli_logit(ones, zeros, eta_former, beta);
  real loss_former = betad_bernoulli_logit_former(to_vector(y), eta_former, beta);
}
