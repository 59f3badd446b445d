// Component frames for the private Gaussian-mixture fit: each component's
// statistics are computed, and released, in coordinates fitted to that
// component, so that the noise shrinks with the component (docs/privacy.md,
// "Component frames"; docs/gmm.md). Private to the library.
//
// A frame of component k is a public affine map with a clip: with origin m
// and lower-triangular scale S (x~ = m + S u),
//   u_k(x) = c_k(x) S^{-1} (x - m),   c_k(x) = min(1, 1 / ||S^{-1}(x - m)||)
// (computed per record with a 1e-12 margin, see gmm_framed_estep.cc), so
// that ||u_k(x)|| <= 1 for every record. The global frame (m = 0, S = I, no clip)
// is the unit ball itself. A local frame has m = mu_k and S = rho L_k, with
// mu_k, L L^T = Sigma_k from the previous iteration's (released,
// post-processed) parameters and the public radius rho: a Mahalanobis ball of
// radius rho around the component. Frames are functions of released values
// and public options only.
//
// Privacy: Theorem 1 of docs/privacy.md holds verbatim when each component
// sees the record through its own map into the unit ball (Corollary 1
// there), so the joint release of the framed statistics has the same
// sensitivity.
//
// Thread safety: pure functions.
#ifndef DPEM_MODELS_GMM_GMM_FRAMES_H_
#define DPEM_MODELS_GMM_GMM_FRAMES_H_

#include <Eigen/Core>

#include <vector>

#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/status.h"

namespace dpem::internal {

struct ComponentFrame {
  bool local = false;       // false: the global frame (unit ball, no clip).
  Eigen::VectorXd origin;   // m (d); zero for the global frame.
  Eigen::MatrixXd scale;    // S (d x d, lower triangular; diagonal for the
                            // diagonal and spherical types); I if global.
  double radius = 1.0;      // rho (local frames): S = rho L.
};

// The frames for the next E-step under `params` (unit-ball parameters): a
// local frame of radius `radius` (rho > 0) for every component whose
// Mahalanobis ball is smaller than the unit ball (rho^2 lambda_max(Sigma_k)
// < 1); the global frame for the others. With
// radius = +infinity every frame is global. A component whose
// eigen-decomposition or Cholesky factorisation fails, or whose frame's
// inverse scale overflows, keeps the global frame (always valid: the frames
// are chosen from released values, and the choice must never fail the fit).
// InvalidArgument only for radius <= 0.
StatusOr<std::vector<ComponentFrame>> ChooseFrames(const GmmParameters& params, double radius);

// The default radius for d dimensions: sqrt(d) + 2. The Mahalanobis norm of a
// Gaussian record concentrates at sqrt(d) with standard deviation about
// 1/sqrt(2), so this clips about 0.3% of a Gaussian component's records
// (d = 2: exp(-(2 + sqrt 2)^2 / 2) = 0.29%).
double DefaultFrameRadius(Eigen::Index dimension);

// One E-step pass over unit-ball records that returns each component's
// statistics in its own frame: counts sum_i g_ik, sums sum_i g_ik u_k(x_i)
// and second moments sum_i g_ik T(u_k(x_i)) (T as in joint_release.h),
// accumulated from each record's u_k computed explicitly (never derived from
// global sums, whose rounding the frame map would amplify). The
// responsibilities g come from `params`. InvalidArgument on a shape mismatch.
StatusOr<GmmStatistics> ComputeFramedStatistics(const GmmParameters& params,
                                                const std::vector<ComponentFrame>& frames,
                                                const RowSource& unit, const Engine& engine);

// Statistics of the clipped records x~ = m + S u in global (unit-ball)
// coordinates from framed (e.g. released) statistics: sums N m + S A,
// second moments N m m^T + m (S A)^T + (S A) m^T + S B S^T (their diagonal or
// trace for the diagonal and spherical types), with N the counts. Exact
// algebra on released values: post-processing.
GmmStatistics FramedToGlobal(const GmmStatistics& framed,
                             const std::vector<ComponentFrame>& frames);

// Raises the eigenvalues of Sigma_k seen in frame k (S^{-1} Sigma_k S^{-T})
// to floors(k), for local frames; global frames are left alone, and so is a
// component whose matrix in its frame is not finite (a tiny public radius;
// the global floor of the caller still applies). Never fails.
Status FloorInFrames(GmmParameters& params, const std::vector<ComponentFrame>& frames,
                     const Eigen::VectorXd& floors);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_FRAMES_H_
