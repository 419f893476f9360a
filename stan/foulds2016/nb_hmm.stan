// Foulds, Geumlek, Welling & Chaudhuri (2016), "On the theory and practice of
// privacy-preserving Bayesian data analysis", UAI. Section 4.2, Section 5 and supplement E
// (generative process and Eq. 47, exponential-family emissions Eq. 50-51, Laplace
// mechanism E.1).
//
// Hidden Markov model with naive-Bayes emissions: R independent chains (regions) of T
// timesteps, K latent states; transition rows A[k] ~ Dirichlet(alpha), including the dummy
// initial state z_0 (row A[1]); per state k and feature d an emission simplex
// theta^(k,d) ~ Dirichlet(beta) over the K_d values of feature d. With K = 1 it is the
// naive-Bayes model. The latent states are summed out with the forward algorithm (Stan
// cannot sample discrete parameters; this replaces the paper's collapsed Gibbs sampler and
// targets the same posterior of (A, theta)); z is drawn afterwards by forward filtering,
// backward sampling.
//
// The data enter only through the per-(cell, feature) count vectors n_{r,t,d,:} (Eq. 51):
// the emission log-likelihood of every cell and state is one matrix product
// counts * log(theta), so its cost does not depend on the number of log entries, and real
// (noisy) counts work unchanged. Cell (r, t) is row (t - 1) * R + r of `counts`; held-out
// cells (heldout = 1) are left out of the likelihood.
//
// Privacy. Non-private: `counts` are the exact counts (a named non-private baseline).
// Laplace mechanism (E.1): `counts` are proj_{>=0}(n + Laplace(2 / epsilon_d)), released
// once for every cell of the grid; per feature the count array has L1 sensitivity 2 under
// replace-one neighbouring log entries, so the release is (sum_d epsilon_d)-DP (features
// compose sequentially, cells are covered by the one sensitivity-2 bound). This program
// is post-processing of that release: every draw, summary and MCMC iteration is free.
functions {
#include hmm.stanfunctions
}
data {
  int<lower=1> R;                              // chains (regions)
  int<lower=1> T;                              // timesteps per chain
  int<lower=1> K;                              // latent states (K = 1: naive Bayes)
  int<lower=1> D;                              // features
  array[D] int<lower=2> feature_size;          // K_d values of feature d
  array[D] int<lower=1> reference;             // reference value of feature d (eta coordinates)
  matrix<lower=0>[T * R, sum(feature_size)] counts;  // (noisy) counts n_{r,t,d,j}
  array[T * R] int<lower=0, upper=1> heldout;  // 1 = cell left out of the likelihood
  real<lower=0> alpha;                         // Dirichlet concentration, transition rows
  real<lower=0> beta;                          // Dirichlet concentration, emissions
}
transformed data {
  int J = sum(feature_size);
  vector[T * R] observed = 1 - to_vector(heldout);
  for (d in 1:D) {
    if (reference[d] > feature_size[d]) {
      reject("reference[", d, "] must be in 1..feature_size[", d, "]");
    }
  }
}
parameters {
  array[K + 1] simplex[K] A;     // A[1]: dummy initial state's row; A[k + 1]: state k's row
  matrix[J - D, K] eta;          // additive-logistic coordinates of the emission simplexes
                                 // (log theta_j - log theta_reference, j != reference)
}
model {
  matrix[J, K] log_theta = alr_log_simplexes(eta, feature_size, reference);
  for (k in 1:(K + 1)) {
    A[k] ~ dirichlet(rep_vector(alpha, K));
  }
  // Dirichlet(beta) on every theta^(k,d): prod theta^(beta - 1), times prod theta, the
  // Jacobian of the additive-logistic map from eta (the same for every reference value)
  target += beta * sum(log_theta);
  target += hmm_forward_total(emission_loglik(counts, log_theta, observed), R, log(A[1]),
                              log_transition(A));
}
generated quantities {
  matrix[K, J] theta;            // theta[k, offset_d + j] = Pr(feature d = value j | state k)
  real log_lik;                  // marginal log-likelihood of the cells in the likelihood
  real log_lik_heldout = 0;      // sum over held-out cells c of log p(counts_c | A, theta, rest)
  array[R, T] vector[K] state_prob;  // p(z_{r,t} = k | A, theta, cells in the likelihood)
  array[R, T] int z;                 // one draw of the state paths given the same
  {
    matrix[J, K] log_theta = alr_log_simplexes(eta, feature_size, reference);
    matrix[K, K] log_gamma = log_transition(A);
    vector[K] log_rho = log(A[1]);
    matrix[T * R, K] E_all = counts * log_theta;
    matrix[T * R, K] E = emission_loglik(counts, log_theta, observed);
    matrix[T * R, K] lp = hmm_log_state_prob(E, R, log_rho, log_gamma);
    theta = exp(log_theta)';
    log_lik = hmm_forward_total(E, R, log_rho, log_gamma);
    for (t in 1:T) {
      for (r in 1:R) {
        int c = (t - 1) * R + r;
        state_prob[r, t] = exp(lp[c])';
        if (heldout[c]) {
          log_lik_heldout += log_sum_exp(lp[c] + E_all[c]);
        }
      }
    }
    z = hmm_ffbs_rng(E, R, log_rho, log_gamma);
  }
}
