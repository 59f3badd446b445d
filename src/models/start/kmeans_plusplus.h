// k-means++ seeding and Lloyd's algorithm to convergence, as scikit-learn's
// KMeans(init="k-means++", n_init=1) runs them: the non-private starting
// point of plain EM (models/gmm/gmm_init.h) and of plain Lloyd
// (KmeansFitOptions::init). They read the records WITHOUT noise: never part
// of a private fit. Private to the library.
//
// Thread safety: pure functions of their arguments (the seeding advances the
// Generator it is given).
#ifndef DPEM_MODELS_START_KMEANS_PLUSPLUS_H_
#define DPEM_MODELS_START_KMEANS_PLUSPLUS_H_

#include <Eigen/Core>

#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::internal {

// Lloyd stops once the centres' total squared move is at most this times the
// data's mean coordinate variance (scikit-learn's KMeans tol).
inline constexpr double kLloydRelativeTolerance = 1e-4;

// Greedy k-means++ (Arthur and Vassilvitskii 2007; scikit-learn's
// kmeans_plusplus): the first centre is a uniformly drawn record; each next
// one is the best, by the resulting potential sum_i min_k ||x_i - mu_k||^2,
// of 2 + floor(log K) records drawn with probability proportional to their
// squared distance to the nearest centre so far. Returns K x d records of
// `x` (distinct whenever x holds at least K distinct records). Holds one
// double per record. Requires 1 <= K <= N (InvalidArgument otherwise).
StatusOr<Eigen::MatrixXd> KmeansPlusPlusSeeds(const RowSource& x, int k, const Engine& engine,
                                              Generator& gen);

// Lloyd's algorithm from `centres` (K x d): at most `max_iterations` (>= 1)
// assignment passes, stopping once the centres move by less than
// kLloydRelativeTolerance; a centre that gets no record stays where it is.
StatusOr<Eigen::MatrixXd> LloydToConvergence(const RowSource& x, Eigen::MatrixXd centres,
                                             int max_iterations, const Engine& engine);

// KmeansPlusPlusSeeds, then LloydToConvergence.
StatusOr<Eigen::MatrixXd> KmeansPlusPlusCentres(const RowSource& x, int k, int max_iterations,
                                                const Engine& engine, Generator& gen);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_START_KMEANS_PLUSPLUS_H_
