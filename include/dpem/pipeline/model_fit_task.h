// The FitTask of a model whose fit reads records through a public domain
// (Gaussian mixtures, k-means, factor analysis): its options, its fit
// function and its model-file writer are all that is its own, so one adapter
// serves them all. A class template over the two types, not a strategy: the
// model's functions are plain runtime pointers.
//
// Options must have Validate(), `epsilon`, `delta` and `domain` (DataDomain);
// Fitted must have `guarantee` (extending PrivacyGuarantee).
//
// Thread safety: one RunFit at a time per task.
#ifndef DPEM_PIPELINE_MODEL_FIT_TASK_H_
#define DPEM_PIPELINE_MODEL_FIT_TASK_H_

#include <string>
#include <utility>

#include "dpem/models/model_io.h"
#include "dpem/pipeline/fit_pipeline.h"

namespace dpem {

template <typename Options, typename Fitted>
class ModelFitTask final : public FitTask {
 public:
  // What the model supplies: its fit and its model file; and, if the delta a
  // budget is charged is not `options.delta` (a pure-DP method), that delta.
  struct Model {
    StatusOr<Fitted> (*fit)(const RowSource& x, const Options& options, Generator& gen);
    std::string (*model_json)(const Fitted& fitted);
    double (*charged_delta)(const Options& options) = nullptr;
  };

  ModelFitTask(Model model, Options options)
      : model_(model), options_(std::move(options)) {}

  Status Validate() const override { return options_.Validate(); }
  StatusOr<double> ChargedEpsilon() const override { return options_.epsilon; }
  double ChargedDelta() const override {
    return model_.charged_delta ? model_.charged_delta(options_) : options_.delta;
  }
  DataDomain* MutableDomain() override { return &options_.domain; }
  double* MutableEpsilon() override { return &options_.epsilon; }
  Status Fit(const RowSource& x, Generator& gen) override {
    DPEM_ASSIGN_OR_RETURN(fitted_, model_.fit(x, options_, gen));
    return OkStatus();
  }
  PrivacyGuarantee& MutableGuarantee() override { return fitted_.guarantee; }
  std::string ModelJson() const override { return model_.model_json(fitted_); }

  // The options (with the released domain, once RunFit released one) and
  // the fitted model (after a successful RunFit).
  const Options& options() const { return options_; }
  const Fitted& fitted() const { return fitted_; }

 private:
  Model model_;
  Options options_;
  Fitted fitted_;
};

// The task of a model fitted by `fit` over a row source, whose model file is
// ModelIo<Fitted>::ToJson (dpem/models/model_io.h); `charged_delta` as in
// ModelFitTask::Model (null: options.delta).
template <typename Options, typename Fitted>
ModelFitTask<Options, Fitted> MakeModelFitTask(
    StatusOr<Fitted> (*fit)(const RowSource& x, const Options& options, Generator& gen),
    Options options, double (*charged_delta)(const Options& options) = nullptr) {
  return ModelFitTask<Options, Fitted>({fit, &ModelIo<Fitted>::ToJson, charged_delta},
                                       std::move(options));
}

}  // namespace dpem

#endif  // DPEM_PIPELINE_MODEL_FIT_TASK_H_
