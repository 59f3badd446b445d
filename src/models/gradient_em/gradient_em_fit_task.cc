// DP gradient EM as a pipeline task: see
// dpem/models/gradient_em/gradient_em_fit_task.h.
#include "dpem/models/gradient_em/gradient_em_fit_task.h"

#include <limits>
#include <memory>

#include "dpem/data/generators.h"
#include "dpem/models/gradient_em/gradient_em_model_io.h"
#include "engine/rank_combine.h"
#include "models/gradient_em/gradient_em_internal.h"

namespace dpem {

Status GradientEmFitTask::Validate() const { return options_.Validate(); }

StatusOr<double> GradientEmFitTask::ChargedEpsilon() const {
  if (!options_.IsPrivate()) return std::numeric_limits<double>::infinity();
  return GradientEmChargedEpsilon(options_);
}

// The rows this process holds, as the model's data: the whole table, or on
// a rank of a distributed fit its shard (each rank needs at least one row),
// checked on every rank before any rank goes on.
Status GradientEmFitTask::Fit(const RowSource& x, Generator& gen) {
  const RowRange local = x.LocalRows();
  DataMatrix scratch;
  DataMatrix m;
  if (local.size() > 0) m = x.Block(local.begin, local.size(), scratch);
  StatusOr<GradientEmData> data = FromDataMatrix(model_, m);
  DPEM_RETURN_IF_ERROR(internal::AgreeOnStatus(x.collective(), data.status()));
  n_ = x.rows();
  if (x.collective() == nullptr) {
    DPEM_ASSIGN_OR_RETURN(fit_, FitGradientEm(*data, options_, gen));
    return OkStatus();
  }
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource rows, MatrixRowSource::Borrow(data->x));
  DPEM_ASSIGN_OR_RETURN(const ShardRowSource shard,
                        ShardRowSource::Create(std::make_unique<MatrixRowSource>(rows),
                                               *x.collective()));
  DPEM_ASSIGN_OR_RETURN(fit_, internal::FitGradientEmOnRows(*data, shard, options_, gen));
  return OkStatus();
}

std::string GradientEmFitTask::ModelJson() const {
  return GradientEmModelIo::ToJson(MakeGradientEmModelFit(model_, options_, n_, fit_, trajectory_));
}

}  // namespace dpem
