// Test-only program (not a model): evaluates the local-DP likelihoods of Kulkarni et al.
// (2022) (stan/functions/ldp.stanfunctions) at given arguments in generated quantities, so
// that tests/test_kulkarni2022_functions.py can compare them with scipy quadrature and
// brute-force enumeration (run with fixed_param).
functions {
#include log_phi.stanfunctions
#include ldp.stanfunctions
  // one report, routed to its group exactly as the models do
  real one_gauss(real z, real mu, real sigma, real a, real b, real beta) {
    if (z <= a) return ldp_gauss_laplace_loglik(rep_vector(0, 0), 1, z, 0, 0, mu, sigma, a, b, beta);
    if (z >= b) return ldp_gauss_laplace_loglik(rep_vector(0, 0), 0, 0, 1, z, mu, sigma, a, b, beta);
    return ldp_gauss_laplace_loglik(rep_vector(z, 1), 0, 0, 0, 0, mu, sigma, a, b, beta);
  }
  real one_exp(real z, real theta, real b, real beta) {
    if (z <= 0) return ldp_exp_laplace_loglik(rep_vector(0, 0), 1, z, 0, 0, theta, b, beta);
    if (z >= b) return ldp_exp_laplace_loglik(rep_vector(0, 0), 0, 0, 1, z, theta, b, beta);
    return ldp_exp_laplace_loglik(rep_vector(z, 1), 0, 0, 0, 0, theta, b, beta);
  }
}
data {
  int<lower=0> K_g;                       // Gaussian cases: (z, mu, sigma, a, b, beta)
  array[K_g] vector[6] g_args;
  int<lower=0> K_e;                       // exponential cases: (z, theta, b, beta)
  array[K_e] vector[4] e_args;
  int<lower=0> K_o;                       // OUE cases: one report and one theta each
  int<lower=2> d;
  array[K_o, d] int<lower=0, upper=1> o_z;
  array[K_o] simplex[d] o_theta;
  vector<lower=0>[K_o] o_eps;
  int<lower=1> N_v;                       // a batch of reports for the vectorised paths
  vector[N_v] v_z;
  vector[4] v_gauss;                      // (mu, sigma, a, b); beta = v_beta
  vector[2] v_exp;                        // (theta, b)
  real<lower=0> v_beta;
}
generated quantities {
  vector[K_g] g_ll;
  vector[K_e] e_ll;
  vector[K_o] o_ll;
  vector[2] v_gauss_ll;                   // batch through the grouped path, sum of singles
  vector[2] v_exp_ll;
  for (k in 1:K_g) g_ll[k] = one_gauss(g_args[k][1], g_args[k][2], g_args[k][3], g_args[k][4], g_args[k][5], g_args[k][6]);
  for (k in 1:K_e) e_ll[k] = one_exp(e_args[k][1], e_args[k][2], e_args[k][3], e_args[k][4]);
  for (k in 1:K_o) {
    matrix[1, d] zm = to_matrix(o_z[k:k]);
    o_ll[k] = ldp_oue_loglik(zm, 1 - zm, rep_vector(1, 1), o_theta[k], o_eps[k]);
  }
  {
    array[1] int n = {N_v};
    real a = v_gauss[3];
    real b = v_gauss[4];
    array[1] int n_lo = ldp_group_count(v_z, n, a, b, -1);
    array[1] int n_hi = ldp_group_count(v_z, n, a, b, 1);
    array[1] int n_mid = ldp_group_count(v_z, n, a, b, 0);
    vector[1] s_lo = ldp_group_sum(v_z, n, a, b, -1);
    vector[1] s_hi = ldp_group_sum(v_z, n, a, b, 1);
    v_gauss_ll[1] = ldp_gauss_laplace_loglik(ldp_mid_values(v_z, a, b, n_mid[1]), n_lo[1], s_lo[1], n_hi[1], s_hi[1],
                                             v_gauss[1], v_gauss[2], a, b, v_beta);
    v_gauss_ll[2] = 0;
    for (i in 1:N_v) v_gauss_ll[2] += one_gauss(v_z[i], v_gauss[1], v_gauss[2], a, b, v_beta);
    b = v_exp[2];
    n_lo = ldp_group_count(v_z, n, 0, b, -1);
    n_hi = ldp_group_count(v_z, n, 0, b, 1);
    n_mid = ldp_group_count(v_z, n, 0, b, 0);
    s_lo = ldp_group_sum(v_z, n, 0, b, -1);
    s_hi = ldp_group_sum(v_z, n, 0, b, 1);
    v_exp_ll[1] = ldp_exp_laplace_loglik(ldp_mid_values(v_z, 0, b, n_mid[1]), n_lo[1], s_lo[1], n_hi[1], s_hi[1],
                                         v_exp[1], b, v_beta);
    v_exp_ll[2] = 0;
    for (i in 1:N_v) v_exp_ll[2] += one_exp(v_z[i], v_exp[1], b, v_beta);
  }
}
