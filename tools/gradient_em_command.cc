// dpem generate and dpem fit gradient-em (wang-dp-gradient-em): synthetic
// data of the GMM / MRM / RMC models, and (DP) gradient EM fits of them;
// and the score handler of their "dpem-gradient-em" model files.
// CSV layout (data/generators.h), of the fit's and the score's input alike:
// gmm: y_1..y_d; mrm: y, x_1..x_d; rmc: y, x_1..x_d, z_1..z_d (z_j = 1
// observed, 0 missing).
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "dpem/data/generators.h"
#include "dpem/data/io.h"
#include "dpem/models/gradient_em/gradient_em_fit_task.h"
#include "dpem/models/gradient_em/gradient_em_model_io.h"
#include "fit_flags.h"
#include "internal/file_util.h"
#include "model_commands.h"

namespace dpem::cli {
namespace {

using nlohmann::json;

std::vector<double> ToVector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

StatusOr<GradientEmModel> ModelFlag(const std::string& text) {
  return ParseFlag("--model", text, ParseGradientEmModel);
}

// ---------------------------------------------------------------- generate

struct GenerateFlags {
  std::string model;
  long long n = 0;
  long long d = 0;
  double snr = std::numeric_limits<double>::quiet_NaN();
  double sigma = 1.0;
  double missing_prob = 0.0;
  std::optional<std::string> seed;
  std::string output;
  std::string truth;
};

StatusOr<GeneratorOptions> GeneratorOptionsFromFlags(const GenerateFlags& f) {
  GeneratorOptions o;
  DPEM_ASSIGN_OR_RETURN(o.model, ModelFlag(f.model));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--n", f.n, 1));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--d", f.d, 1));
  if (f.n > 100000000 || f.d > 100000 || f.n * f.d > 500000000) {
    return InvalidArgumentError("--n, --d: at most 1e8 records, 1e5 dimensions, 5e8 values");
  }
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--snr", f.snr));
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--sigma", f.sigma));
  if (!(f.missing_prob >= 0.0 && f.missing_prob < 1.0)) {
    return InvalidArgumentError("--missing-prob: must be in [0, 1), got " +
                                FormatNumber(f.missing_prob));
  }
  if (f.missing_prob > 0.0 && o.model != GradientEmModel::kRmc) {
    return InvalidArgumentError("--missing-prob: applies to --model rmc only");
  }
  o.n = f.n;
  o.d = f.d;
  o.snr = f.snr;
  o.sigma = f.sigma;
  o.missing_prob = f.missing_prob;
  return o;
}

Status RunGenerate(const GenerateFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GeneratorOptions o, GeneratorOptionsFromFlags(f));
  if (f.output == f.truth) return InvalidArgumentError("--truth: must differ from --output");
  DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.truth));
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  DPEM_ASSIGN_OR_RETURN(const GeneratedData g, GenerateGradientEmData(o, gen));
  json truth = {{"model", GradientEmModelName(o.model)},
                {"beta", ToVector(g.beta)},
                {"sigma", g.sigma},
                {"snr", o.snr},
                {"n", o.n},
                {"d", o.d},
                {"missing_prob", o.missing_prob},
                {"columns", o.model == GradientEmModel::kGmm   ? "y_1..y_d"
                            : o.model == GradientEmModel::kMrm ? "y, x_1..x_d"
                                                               : "y, x_1..x_d, z_1..z_d"}};
  if (gen.seed()) truth["seed"] = *gen.seed();
  DPEM_RETURN_IF_ERROR(WriteMatrix(f.output, ToDataMatrix(g.data)));
  return internal::WriteFileAtomically(f.truth, truth.dump(2) + "\n");
}

// ---------------------------------------------------------------- fit

struct GradientEmFlags {
  FitFlags fit;
  std::string model;
  std::string method = "dp";
  long long iterations = 0;
  bool json_output = false;
  bool trajectory = false;
  std::optional<double> sigma;
  std::optional<double> tau;
  std::optional<double> clip;
  std::optional<double> robust_scale;
  double step = 1.0;
  double zeta = 0.1;
  double init_norm = 1.0;
  std::vector<double> init;
  std::string calibration = "accountant";
};

const FitFlagTable& Table() {
  static const FitFlagTable table{
      .command = "fit gradient-em",
      .description = "DP gradient EM (wang-dp-gradient-em) for gmm, mrm, rmc; prints beta "
                     "and, with --output, writes the model file.",
      .input_help = "Data CSV/.npy: gmm y_1..y_d; mrm y,x_1..x_d; rmc y,x_1..x_d,z_1..z_d",
      .output = false,
      .quiet = false,
      .epsilon_help = "Total epsilon (> 0); required unless nonprivate",
      .epsilon_required = false,
      .delta_help = "Total delta in (0, 1); required unless nonprivate",
      .accountant_help = "Accountant certifying the total: " + AccountantNameList() +
                         " (default rdp)",
      .domain = false,
  };
  return table;
}

// The method's public parameters: tau and the robust scale (dp, dp-em), the
// clipping threshold (clipped), zeta.
Status MethodFlagsInto(const GradientEmFlags& f, GradientEmOptions& o) {
  const bool robust = o.method == GradientEmMethod::kDp || o.method == GradientEmMethod::kDpEm;
  if (robust && !f.tau) {
    return InvalidArgumentError("--tau: the public second-moment bound is required for " +
                                std::string(GradientEmMethodName(o.method)) + " (no default)");
  }
  if (f.tau) DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--tau", *f.tau));
  if (f.tau) o.tau = *f.tau;
  if (f.robust_scale) {
    if (!robust) return InvalidArgumentError("--robust-scale: applies to dp and dp-em only");
    DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--robust-scale", *f.robust_scale));
    o.robust_scale = *f.robust_scale;
  }
  if (o.method == GradientEmMethod::kClipped && !f.clip) {
    return InvalidArgumentError("--clip: the clipping threshold C is required for clipped");
  }
  if (f.clip) DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--clip", *f.clip));
  if (f.clip) o.clip = *f.clip;
  if (!(f.zeta > 0.0 && f.zeta < 1.0)) {
    return InvalidArgumentError("--zeta: must be in (0, 1), got " + FormatNumber(f.zeta));
  }
  o.zeta = f.zeta;
  return OkStatus();
}

Status PrivacyFlagsInto(const GradientEmFlags& f, GradientEmOptions& o) {
  const FitFlags& fit = f.fit;
  if (!o.IsPrivate()) {
    if (fit.epsilon_text || fit.delta || f.tau || f.clip) {
      return InvalidArgumentError("--epsilon/--delta/--tau/--clip: not used by --method nonprivate");
    }
    return OkStatus();
  }
  if (!fit.epsilon_text) return InvalidArgumentError("--epsilon: required for a private method");
  if (!fit.delta) return InvalidArgumentError("--delta: required for a private method");
  DPEM_ASSIGN_OR_RETURN(o.epsilon, EpsilonFromFlags(fit));
  DPEM_RETURN_IF_ERROR(RequireUsableEpsilon("--epsilon", o.epsilon));
  DPEM_ASSIGN_OR_RETURN(o.delta, DeltaFromFlags(fit, true));
  DPEM_ASSIGN_OR_RETURN(o.accountant, AccountantFromFlags(fit, kDefaultAccountant));
  DPEM_ASSIGN_OR_RETURN(o.calibration,
                        ParseFlag("--calibration", f.calibration, ParseNoiseCalibrationRule));
  return MethodFlagsInto(f, o);
}

StatusOr<GradientEmOptions> FitOptionsFromFlags(const GradientEmFlags& f) {
  GradientEmOptions o;
  DPEM_ASSIGN_OR_RETURN(o.method, ParseFlag("--method", f.method, ParseGradientEmMethod));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", f.iterations, 1));
  DPEM_RETURN_IF_ERROR(RequireAtMost("--iterations", f.iterations, 100000));
  o.iterations = static_cast<int>(f.iterations);
  if (!f.sigma) return InvalidArgumentError("--sigma: the model's public noise level is required");
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--sigma", *f.sigma));
  o.sigma = *f.sigma;
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--step", f.step));
  o.step = f.step;
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--init-norm", f.init_norm));
  o.init_norm = f.init_norm;
  if (!f.init.empty()) {
    o.initial = Eigen::Map<const Eigen::VectorXd>(f.init.data(),
                                                  static_cast<Eigen::Index>(f.init.size()));
    if (!o.initial.allFinite()) return InvalidArgumentError("--init: values must be finite");
  }
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromFlags(f.fit));
  DPEM_RETURN_IF_ERROR(PrivacyFlagsInto(f, o));
  return o;
}

Status RunFitGradientEm(const GradientEmFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GradientEmModel model, ModelFlag(f.model));
  DPEM_ASSIGN_OR_RETURN(GradientEmOptions o, FitOptionsFromFlags(f));
  DPEM_ASSIGN_OR_RETURN(FitRequest request, FitRequestFromFlags(Table(), f.fit));
  if (!f.fit.output.empty()) request.output = f.fit.output;
  GradientEmFitTask task(model, std::move(o), f.trajectory);
  DPEM_RETURN_IF_ERROR(RunFit(task, request));
  const json out = json::parse(task.ModelJson());
  if (f.json_output) {
    PrintJson(out);
  } else {
    std::cout << "beta: " << json(out["beta"]).dump() << "\n"
              << "privacy: " << out["privacy"].dump() << "\n";
  }
  return OkStatus();
}

// The options of fit gradient-em besides the shared ones.
void AddFitOptions(CLI::App* app, GradientEmFlags& f) {
  app->add_option("--model", f.model, "gmm, mrm or rmc")->required();
  app->add_option("--method", f.method,
                  "dp (Algorithm 2, default), clipped (Algorithm 1), dp-em (Algorithm 3, gmm "
                  "only) or nonprivate (gradient EM)");
  app->add_option("--iterations", f.iterations, "Number of iterations T (>= 1), fixed")
      ->required();
  app->add_option("--sigma", f.sigma, "The model's public noise level sigma (> 0); required");
  app->add_option("--tau", f.tau,
                  "dp, dp-em: public bound on the second moment of each gradient (or EM-map) "
                  "coordinate; sets the robust scale s. Required, no default");
  app->add_option("--robust-scale", f.robust_scale,
                  "dp, dp-em: the robust scale s (public); default Algorithm 2's "
                  "sqrt(n tau eps~) / (2 sqrt(log(d / zeta)))");
  app->add_option("--clip", f.clip, "clipped: the L2 clipping threshold C; required");
  app->add_option("--step", f.step, "Step size eta (default 1 = 2/(mu+nu), Theorem 4)");
  app->add_option("--zeta", f.zeta, "dp, dp-em: failure probability zeta (default 0.1)");
  app->add_option("--calibration", f.calibration,
                  "accountant (default: the least noise the accountant certifies) or paper "
                  "(Algorithm 2's sigma^2 = 16 s^2 d T / (9 n^2 eps~^2), exact in zCDP)");
  app->add_option("--init", f.init, "Initial beta, comma-separated (default: random, from --seed)")
      ->delimiter(',');
  app->add_option("--init-norm", f.init_norm, "Norm of the random initial beta (default 1)");
  app->add_option("--output", f.fit.output,
                  "Model file to write (JSON, format dpem-gradient-em; read by dpem score); "
                  "default: none");
  app->add_flag("--json", f.json_output, "Print the model file's JSON");
  app->add_flag("--trajectory", f.trajectory,
                "Include beta^0..beta^T in the JSON and the model file");
}

}  // namespace

Command AddFitGradientEmCommand(CLI::App& fit) {
  return AddFitCommand(fit, "gradient-em", Table(), AddFitOptions, RunFitGradientEm);
}

Status ScoreGradientEmModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GradientEmModelFit fit, GradientEmModelIo::Read(f.model));
  return ScoreLogLikelihood(f, GradientEmModelColumns(fit), [&](const DataMatrix& records) {
    return GradientEmModelMeanLogLikelihood(fit, records);
  });
}

Command AddGenerateCommand(CLI::App& root) {
  const auto add_options = [](CLI::App* app, GenerateFlags& f) {
    app->add_option("--model", f.model, "gmm, mrm or rmc")->required();
    app->add_option("--n", f.n, "Number of records (>= 1)")->required();
    app->add_option("--d", f.d, "Dimension (>= 1)")->required();
    app->add_option("--snr", f.snr, "Signal-to-noise ratio ||beta*|| / sigma (> 0)")->required();
    app->add_option("--sigma", f.sigma, "Noise level sigma (default 1)");
    app->add_option("--missing-prob", f.missing_prob,
                    "rmc: probability that each covariate is missing (default 0)");
    app->add_option("--seed", f.seed, "Seed (default: the operating system's CSPRNG)");
    app->add_option("--output", f.output, "Data file (.csv or .npy)")->required();
    app->add_option("--truth", f.truth, "JSON file for beta* and sigma")->required();
  };
  return AddSubcommand<GenerateFlags>(
      root, "generate", "Synthetic data of the gradient-EM models (gmm, mrm, rmc) and their truth.",
      add_options, RunGenerate);
}

}  // namespace dpem::cli
