// Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally differentially private Bayesian
// inference". Sec. 3.2.2 and supplement Sec. 11 (Eq. 31-33), prior of Figure 8.
//
// Histogram (categorical theta on d categories) from optimal-unary-encoding (OUE) reports,
// for R independent data sets in one run (product posterior):
//   x_i ~ Categorical(theta); user i one-hot encodes x_i and reports each bit z_ij, the
//   true bit being 1 w.p. 1/2 and every other bit 1 w.p. q = 1/(e^epsilon + 1).
// Marginalising x_i (Eq. 33): Pr[z | theta] = const(z) * ((1 - z.theta) + e^epsilon z.theta).
// Identical reports are aggregated: the data are the M distinct informative reports (not
// all zeros, not all ones: those are constant in theta) and their counts w, so the cost is
// O(M d), independent of the number of users.
// Prior: theta ~ Dirichlet(alpha) (alpha = 1: Figure 8).
//
// Privacy: each report is epsilon-LDP (OUE, Wang et al. 2017); the posterior is
// post-processing of the reports.
functions {
#include log_phi.stanfunctions
#include ldp.stanfunctions
}
data {
  int<lower=1> R;                          // number of independent data sets
  int<lower=2> d;                          // number of categories
  array[R] int<lower=0> M;                 // distinct informative reports per data set
  array[sum(M), d] int<lower=0, upper=1> Z;  // the reports, data set after data set
  vector<lower=0>[sum(M)] w;               // users who sent each report
  real<lower=0> epsilon;                   // per-user epsilon
  vector<lower=0>[d] alpha;                // Dirichlet prior
}
transformed data {
  matrix[sum(M), d] Zm = rep_matrix(0, sum(M), d);
  array[R] int start = ldp_segment_starts(M);
  for (i in 1:sum(M)) {
    Zm[i] = to_row_vector(Z[i]);
    if (sum(Z[i]) == 0 || sum(Z[i]) == d) {
      reject("report ", i, " is all zeros or all ones: uninformative reports must be dropped");
    }
  }
  matrix[sum(M), d] Zc = 1 - Zm;
}
parameters {
  array[R] simplex[d] theta;
}
model {
  for (r in 1:R) {
    theta[r] ~ dirichlet(alpha);
    if (M[r] > 0) {
      target += ldp_oue_loglik(block(Zm, start[r], 1, M[r], d), block(Zc, start[r], 1, M[r], d),
                               segment(w, start[r], M[r]), theta[r], epsilon);
    }
  }
}
