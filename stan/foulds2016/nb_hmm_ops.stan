// Foulds, Geumlek, Welling & Chaudhuri (2016), "On the theory and practice of
// privacy-preserving Bayesian data analysis", UAI. Section 2.2 (Eq. 6-10, Theorem 2),
// Section 4.1, Section 5 and supplement E (Eq. 47, 50-51; truncated Dirichlets, Fig. 6).
//
// One-posterior sampling (OPS) for the hidden Markov model with naive-Bayes emissions of
// nb_hmm.stan (K = 1: naive Bayes). Emission simplexes are truncated,
// theta^(k,d)_j >= a0_d with a0_d = 1 / (M K_d) in the paper (M = 10 or 100), written as
// theta = a0_d + (1 - K_d a0_d) phi with phi on the simplex; the prior is Dirichlet(beta)
// restricted to that region. The whole joint is sampled at temperature T (Eq. 10):
//
//   f(A, theta, z | X) ∝ Pr(A, theta, z, X)^(1 / T),
//
// with z summed out by the forward algorithm on tempered weights (transitions A^(1/T),
// emissions exp(E / T)) and drawn afterwards from its tempered conditional (forward
// filtering, backward sampling), so (A, theta, z) is one exact draw of the tempered joint.
//
// Privacy. Replacing one log entry changes log Pr(A, theta, z, X) by at most
// Delta = sum_d log((1 - (K_d - 1) a0_d) / a0_d) (the largest over the smallest feasible
// theta_j of every feature; with a0_d = 1/(M K_d): sum_d log((M - 1) K_d + 1)), also when
// the entry moves to another cell. With T = max(1, 2 Delta / epsilon) ONE draw from the
// converged target is epsilon-DP (exponential mechanism, Theorem 2). The guarantee needs a
// draw from the exact target: the Python driver releases a draw only after convergence
// checks (on label-invariant and label-aligned quantities) pass. `counts` here are the
// exact counts: this program sees raw data and only its single released draw is private.
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
  matrix<lower=0>[T * R, sum(feature_size)] counts;  // exact counts n_{r,t,d,j}
  array[T * R] int<lower=0, upper=1> heldout;  // 1 = cell left out of the likelihood
  real<lower=0> alpha;                         // Dirichlet concentration, transition rows
  real<lower=0> beta;                          // Dirichlet concentration, emissions
  vector<lower=0>[D] a0;                       // truncation points, 0 < a0_d < 1 / K_d
  real<lower=1> temperature;                   // T >= 1
}
transformed data {
  int J = sum(feature_size);
  vector[T * R] observed = 1 - to_vector(heldout);
  for (d in 1:D) {
    if (reference[d] > feature_size[d]) {
      reject("reference[", d, "] must be in 1..feature_size[", d, "]");
    }
  }
  for (d in 1:D) {
    if (!(a0[d] > 0 && a0[d] * feature_size[d] < 1)) {
      reject("a0[", d, "] must be in (0, 1 / feature_size[", d, "])");
    }
  }
}
parameters {
  array[K + 1] simplex[K] A;     // A[1]: dummy initial state's row; A[k + 1]: state k's row
  matrix[J - D, K] eta;          // additive-logistic coordinates of phi
                                 // (log phi_j - log phi_reference, j != reference)
}
model {
  matrix[J, K] log_phi = alr_log_simplexes(eta, feature_size, reference);
  matrix[J, K] log_theta = truncated_log_simplexes(log_phi, feature_size, a0);
  real log_prior = (beta - 1) * sum(log_theta);   // truncated Dirichlet(beta), unnormalised
  for (k in 1:(K + 1)) {
    log_prior += dirichlet_lupdf(A[k] | rep_vector(alpha, K));
  }
  // Jacobian of eta -> phi (theta is an affine image of phi: constant Jacobian); a change
  // of variables, so it is not tempered
  target += sum(log_phi);
  target += log_prior / temperature;
  target += hmm_forward_total(emission_loglik(counts, log_theta, observed) / temperature, R,
                              log(A[1]) / temperature, log_transition(A) / temperature);
}
generated quantities {
  matrix[K, J] theta;            // truncated emission probabilities, theta[k, offset_d + j]
  real log_lik;                  // (untempered) marginal log-likelihood of the cells used
  array[R, T] int z;             // state paths from their tempered conditional
  {
    matrix[J, K] log_theta = truncated_log_simplexes(alr_log_simplexes(eta, feature_size, reference),
                                                     feature_size, a0);
    matrix[K, K] log_gamma = log_transition(A);
    matrix[T * R, K] E = emission_loglik(counts, log_theta, observed);
    theta = exp(log_theta)';
    log_lik = hmm_forward_total(E, R, log(A[1]), log_gamma);
    z = hmm_ffbs_rng(E / temperature, R, log(A[1]) / temperature, log_gamma / temperature);
  }
}
