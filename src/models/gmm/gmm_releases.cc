// The releases of one iteration of a private Gaussian-mixture fit: see
// models/gmm/gmm_releases.h.
#include "models/gmm/gmm_releases.h"

#include <algorithm>
#include <limits>
#include <string>

#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/mechanisms/simplex.h"
#include "dpem/mechanisms/unsafe_paper_mechanisms.h"

namespace dpem::internal {
namespace {

// The ledger label of a release of `what` in iteration `iteration`.
std::string IterationLabel(int iteration, const std::string& what) {
  return "iteration " + std::to_string(iteration) + " / " + what;
}

// `spec` labelled as the release of `what` in iteration `iteration`.
NoiseSpec Labelled(NoiseSpec spec, int iteration, const std::string& what) {
  spec.label = IterationLabel(iteration, what);
  return spec;
}

// Maps released counts to N~ = n * (projection of counts / n onto the simplex).
Status ProjectCounts(GmmStatistics& s, double n) {
  DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd w, ProjectToSimplex(s.counts / n));
  s.counts = n * w;
  return OkStatus();
}

// Releases row `r` of a K x d block of statistics as one vector mechanism
// (rows of a column-major matrix are not contiguous, so through a copy).
Status ReleaseRow(Eigen::MatrixXd& block, Eigen::Index r, const NoiseSpec& spec, Generator& gen,
                  PrivacyLedger& ledger) {
  Eigen::VectorXd row = block.row(r).transpose();
  DPEM_RETURN_IF_ERROR(ReleaseVector(row, spec, gen, ledger));
  block.row(r) = row.transpose();
  return OkStatus();
}

// Releases the second moment of component `c` in iteration `it`, as its
// covariance type holds it: a symmetric matrix, a diagonal or a trace.
Status ReleaseSecondMoment(GmmStatistics& s, Eigen::Index c, const GmmReleasePlan& plan,
                           int it, Generator& gen, PrivacyLedger& ledger) {
  const std::string what = "second moments[" + std::to_string(c) + "]";
  const NoiseSpec spec = Labelled(plan.second, it, what);
  switch (s.type) {
    case CovarianceType::kFull:
      return ReleaseSymmetric(s.second_full[c], spec, gen, ledger);
    case CovarianceType::kDiagonal:
      return ReleaseRow(s.second_diag, c, spec, gen, ledger);
    case CovarianceType::kSpherical: {
      Eigen::VectorXd one = Eigen::VectorXd::Constant(1, s.second_trace(c));
      DPEM_RETURN_IF_ERROR(ReleaseVector(one, spec, gen, ledger));
      s.second_trace(c) = one(0);
      return OkStatus();
    }
  }
  return InternalError("unhandled covariance type");
}

}  // namespace

Status AddReleaseNoise(GmmStatistics& s, const GmmReleasePlan& plan, bool unsafe, int it,
                       Generator& gen, PrivacyLedger& ledger) {
  s.log_likelihood = std::numeric_limits<double>::quiet_NaN();
  if (plan.joint) {
    return ReleaseJointStatistics(s, plan.split, plan.joint_multiplier,
                                  IterationLabel(it, "joint statistics"), gen, ledger,
                                  plan.joint_sampling);
  }
  DPEM_RETURN_IF_ERROR(ReleaseVector(s.counts, Labelled(plan.counts, it, "counts"), gen, ledger));
  for (Eigen::Index c = 0; c < s.sums.rows(); ++c) {
    DPEM_RETURN_IF_ERROR(ReleaseRow(
        s.sums, c, Labelled(plan.sums, it, "sums[" + std::to_string(c) + "]"), gen, ledger));
    if (!unsafe) DPEM_RETURN_IF_ERROR(ReleaseSecondMoment(s, c, plan, it, gen, ledger));
  }
  return OkStatus();
}

Status PrivatizeGmmStatistics(GmmStatistics& s, const GmmReleasePlan& plan, bool unsafe, int it,
                              double n, Generator& gen, PrivacyLedger& ledger) {
  DPEM_RETURN_IF_ERROR(AddReleaseNoise(s, plan, unsafe, it, gen, ledger));
  return ProjectCounts(s, n);
}

Status FinishRelease(GmmStatistics& s, const std::vector<ComponentFrame>& frames, bool correct,
                     double n) {
  DPEM_RETURN_IF_ERROR(ProjectCounts(s, n));
  if (correct && !frames.empty()) CorrectFrameClipping(s, frames);
  return OkStatus();
}

Status ReleaseIterationStatistics(GmmStatistics& s, const GmmReleasePlan& plan,
                                  const std::vector<ComponentFrame>& frames, bool correct,
                                  bool unsafe, int it, double n, Generator& gen,
                                  PrivacyLedger& ledger, GmmStatistics* released) {
  DPEM_RETURN_IF_ERROR(AddReleaseNoise(s, plan, unsafe, it, gen, ledger));
  if (released != nullptr) *released = s;
  return FinishRelease(s, frames, correct, n);
}

Status ApplyUnsafeGmmMechanisms(GmmParameters& p, const GmmStatistics& noisy, double eps_i,
                                int it, Generator& gen, PrivacyLedger& ledger) {
  for (Eigen::Index c = 0; c < p.components(); ++c) {
    const double n_k = std::max(noisy.counts(c), 1.0);
    const std::string label = IterationLabel(it, "covariance[" + std::to_string(c) + "]");
    if (p.type == CovarianceType::kSpherical) {
      double var = p.covariances[c](0, 0);
      const double sens = 1.0 / (static_cast<double>(p.dimension()) * n_k);
      DPEM_RETURN_IF_ERROR(ReleaseVarianceGammaUnsafe(var, sens, eps_i, gen, ledger, true, label));
      p.covariances[c] = Eigen::MatrixXd::Identity(p.dimension(), p.dimension()) * var;
    } else {
      DPEM_RETURN_IF_ERROR(ReleaseCovarianceWishartUnsafe(p.covariances[c], 1.0 / n_k, eps_i,
                                                          gen, ledger, true, label));
    }
  }
  return OkStatus();
}

}  // namespace dpem::internal
