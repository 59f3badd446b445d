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
// The same with a radius per component (radii.size() == K, each > 0;
// +infinity gives that component the global frame).
StatusOr<std::vector<ComponentFrame>> ChooseFrames(const GmmParameters& params,
                                                   const Eigen::VectorXd& radii);

// The wide radius for d dimensions, sqrt(d) + 2: the adaptive rule's largest
// (AdaptiveFrameRadii) and the one the private start sizes its covariances
// for. The Mahalanobis norm of a
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

// The clip correction (docs/gmm.md, "Component frames"). A record of
// component k seen in its frame is z = L_k^{-1}(x - m_k) (Mahalanobis units)
// and released as u = z min(1, rho / ||z||) / rho. If z ~ N(delta, c I)
// (the frame fits the component up to a scale c and a small offset delta),
// symmetry gives
//   E[u u^T] = E[min(||z||^2, rho^2)] / (rho^2 d) I,
//   E[u] = E[min(||z||^2, rho ||z||)] / (rho c d) delta + O(delta^3)
// (the second by Stein's lemma), so the clipped moments understate c I and
// delta by factors that depend only on c, rho and d. The correction reads c
// from the clipped mean square itself, `observed` = rho^2 tr(B) / N (B, N the
// framed second moment and count), solving E[min(c X_d, rho^2)] = observed
// for X_d chi-square with d degrees of freedom, and returns the factors that
// undo the shrinkage:
//   second = c d / observed,   mean = c d / E[min(||z||^2, rho ||z||)],
// both in [1, kMaxClipCorrection] (1 for a non-positive or non-finite
// `observed`, and for one below 1e-8 rho^2, records far inside the frame that
// the clip does not touch; kMaxClipCorrection when observed >= rho^2, all
// records on the sphere), and never decreasing in `observed`.
// Post-processing of released values with public rho and d.
inline constexpr double kMaxClipCorrection = 4.0;
struct ClipCorrection {
  double mean = 1.0;    // Multiplies the framed sums.
  double second = 1.0;  // Multiplies the framed second moments.
};
ClipCorrection FrameClipCorrection(double observed, double rho, double d);

// Applies FrameClipCorrection to every local frame's released statistics in
// place (sums and second moments; counts unchanged); global frames, which
// clip nothing, and components with a non-positive count are left alone.
// `frames` must be the frames the statistics were computed in.
void CorrectFrameClipping(GmmStatistics& framed, const std::vector<ComponentFrame>& frames);

// The adaptive frame radii, used when GmmFitOptions::frame_radius is 0.
// Component k's radius balances the release's noise on its covariance against
// the covariance's sampling error: in its frame the noise on one entry is
// about second_noise rho^2 / N_k and the sampling error about 1 / sqrt(N_k),
// so
//   rho_k^2 = kFrameNoiseRatio sqrt(N_k) / second_noise,
// clamped to [NarrowFrameRadius(d)^2, DefaultFrameRadius(d)^2], with N_k =
// max(1, weights(k) records) the count the previous release implies. Little
// noise (large epsilon or N_k) keeps the wide radius sqrt(d) + 2, which
// clips about 0.3% of a Gaussian component's records and is robust to
// heavier tails; much noise shrinks it towards the narrow one, whose larger
// clipping the correction above undoes for a Gaussian component.
// Depends only on released weights and public values (N, the noise scale),
// so the frames stay post-processing. A non-positive or non-finite
// second_noise gives the wide radius for every component.
inline constexpr double kFrameNoiseRatio = 1.0;
// The narrow radius, sqrt(d) + 2 / d: the adaptive rule's smallest. In high
// dimension it is about sqrt(d), where a Gaussian's Mahalanobis norm
// concentrates, so the clip cuts only the outer part of a thin shell (33%
// of a Gaussian component's records at d = 10) and the noise, which grows
// with rho^2 on each of the d(d+1)/2 covariance entries, falls by a factor
// of ((sqrt(d) + 2) / (sqrt(d) + 2 / d))^4 in variance (5.6 at d = 10, 6.7
// at d = 5, before the clip correction's own factor); in low dimension, where the norm
// does not concentrate and the covariance has few entries, it stays wide
// (d = 2: 2.41, clipping 5.4%), so that a heavy-tailed cluster (Gowalla's)
// is not cut into its core (docs/gmm.md, "Component frames", measured).
double NarrowFrameRadius(Eigen::Index dimension);
Eigen::VectorXd AdaptiveFrameRadii(const Eigen::VectorXd& weights, double records,
                                   double second_noise, Eigen::Index dimension);

// Raises the eigenvalues of Sigma_k seen in frame k (S^{-1} Sigma_k S^{-T})
// to floors(k), for local frames; global frames are left alone, and so is a
// component whose matrix in its frame is not finite (a tiny public radius;
// the global floor of the caller still applies). Never fails.
Status FloorInFrames(GmmParameters& params, const std::vector<ComponentFrame>& frames,
                     const Eigen::VectorXd& floors);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_FRAMES_H_
