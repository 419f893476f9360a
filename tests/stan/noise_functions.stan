// Test-only program (not a model): evaluates every function of
// stan/functions/dp_noise.stanfunctions, so that tests/models/test_noise_functions.py can
// compare it with SciPy / mpmath / quadrature / direct sums.
//   * values: run with fixed_param (which = 0), row m of the generated quantity `value` is
//     function fn[m] at the real arguments args[m] and the integer arguments iargs[m];
//   * gradients: log_density with which = f > 0: the log density is function f at the point
//     `at`, the entries flagged in `mask` taken from the parameter vector p (in order).
// Report arguments (randomised response, OUE, clipped reports) are the data zi, Zo, zr; zr is
// also the log weights of dp_binomial_from_weights.
functions {
#include dp_noise.stanfunctions

  real eval(int f, vector a, array[] int ia, vector zr, array[] int zi, array[,] int Zo) {
    int D = size(Zo) > 0 ? size(Zo[1]) : 0;
    if (f == 1) return dp_laplace_clt_lpdf(a[1] | a[2], a[3], a[4]);
    if (f == 2) return dp_gaussian_clt_lpdf(a[1] | a[2], a[3], a[4]);
    if (f == 3) return dp_discrete_laplace_lpmf(ia[1] | ia[2], a[1]);
    if (f == 4) return dp_discrete_gaussian_lpmf(ia[1] | ia[2], a[1]);
    if (f == 5) return dp_discrete_laplace_grid_lpdf(a[1] | a[2], a[3], a[4]);
    if (f == 6) return dp_discrete_gaussian_grid_lpdf(a[1] | a[2], a[3], a[4]);
    if (f == 7) return dp_poisson_laplace_lpdf(a[1] | a[2], a[3], ia[1]);
    if (f == 8) return dp_poisson_gaussian_lpdf(a[1] | a[2], a[3], ia[1]);
    if (f == 9) return dp_poisson_discrete_laplace_lpdf(a[1] | a[2], a[3], a[4], ia[1]);
    if (f == 10) return dp_poisson_discrete_gaussian_lpdf(a[1] | a[2], a[3], a[4], ia[1]);
    if (f == 11) return dp_binomial_laplace_lpdf(a[1] | ia[1], a[2], a[3]);
    if (f == 12) return dp_binomial_gaussian_lpdf(a[1] | ia[1], a[2], a[3]);
    if (f == 13) return dp_binomial_discrete_laplace_lpdf(a[1] | ia[1], a[2], a[3], a[4]);
    if (f == 14) return dp_binomial_discrete_gaussian_lpdf(a[1] | ia[1], a[2], a[3], a[4]);
    if (f == 15) return dp_randomized_response_lpmf(zi | a[1], a[2]);
    if (f == 16) return dp_oue_lpmf(Zo | a[1:D], a[D + 1]);
    if (f == 17) return dp_clipped_laplace_normal_lpdf(zr | a[1], a[2], a[3], a[4], a[5]);
    if (f == 18) return dp_clipped_laplace_exponential_lpdf(zr | a[1], a[2], a[3], a[4]);
    if (f == 19) return dp_clipped_gaussian_normal_lpdf(zr | a[1], a[2], a[3], a[4], a[5]);
    if (f == 20) return dp_binomial_laplace_weights(a[1], ia[1], a[2])[ia[2] + 1];  // weight of s = ia[2]
    if (f == 21) return dp_binomial_from_weights(zr, ia[1], a[1]);  // the weights are zr
    if (f == 22) return dp_discrete_laplace_censored_lpmf(ia[1] | ia[2], a[1]);
    if (f == 23) return dp_discrete_gaussian_censored_lpmf(ia[1] | ia[2], a[1]);
    reject("eval: no function ", f);
  }
}
data {
  int<lower=1> A;                       // real arguments per evaluation
  int<lower=1> B;                       // integer arguments per evaluation
  int<lower=0> M;                       // evaluations in generated quantities
  array[M] int<lower=1, upper=23> fn;
  array[M] vector[A] args;
  array[M, B] int iargs;
  int<lower=0> Nz;                      // reports
  vector[Nz] zr;
  array[Nz] int zi;
  int<lower=0> D;
  array[Nz, D] int Zo;
  int<lower=0, upper=23> which;         // 0: the model block adds nothing
  vector[A] at;
  array[B] int iat;
  array[A] int<lower=0, upper=1> mask;
  int<lower=0> P;                       // = sum(mask)
}
parameters {
  vector[P] p;
}
model {
  if (which > 0) {
    vector[A] a = at;
    int j = 1;
    for (k in 1:A) {
      if (mask[k]) {
        a[k] = p[j];
        j += 1;
      }
    }
    target += eval(which, a, iat, zr, zi, Zo);
  }
}
generated quantities {
  vector[M] value;
  for (m in 1:M) {
    value[m] = eval(fn[m], args[m], iargs[m], zr, zi, Zo);
  }
}
