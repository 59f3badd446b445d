// dpem generate and dpem fit gradient-em (wang-dp-gradient-em): synthetic
// data of the GMM / MRM / RMC models, and (DP) gradient EM fits of them.
// CSV layout (data/generators.h): gmm: y_1..y_d; mrm: y, x_1..x_d;
// rmc: y, x_1..x_d, z_1..z_d (z_j = 1 observed, 0 missing).
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "budget_flags.h"
#include "commands.h"
#include "dpem/data/generators.h"
#include "dpem/data/io.h"
#include "dpem/models/gradient_em/gradient_em.h"
#include "internal/file_util.h"
#include "accounting/ledger_json.h"

namespace dpem::cli {
namespace {

using nlohmann::json;

std::vector<double> ToVector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

StatusOr<GradientEmModel> ModelFlag(const std::string& text) {
  StatusOr<GradientEmModel> m = ParseGradientEmModel(text);
  if (!m.ok()) return InvalidArgumentError("--model: " + m.status().message());
  return *m;
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

struct FitFlags {
  std::string model;
  std::string method = "dp";
  std::string input;
  std::optional<double> epsilon;
  std::optional<double> delta;
  long long iterations = 0;
  std::optional<std::string> seed;
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
  std::string accountant{AccountantName(kDefaultAccountant)};
  std::string calibration = "accountant";
  BudgetFlags budget;
  int threads = 0;
};

Status PrivacyFlagsInto(const FitFlags& f, GradientEmOptions& o) {
  if (!o.IsPrivate()) {
    if (f.epsilon || f.delta || f.tau || f.clip) {
      return InvalidArgumentError("--epsilon/--delta/--tau/--clip: not used by --method nonprivate");
    }
    return OkStatus();
  }
  if (!f.epsilon) return InvalidArgumentError("--epsilon: required for a private method");
  if (!f.delta) return InvalidArgumentError("--delta: required for a private method");
  DPEM_RETURN_IF_ERROR(RequireUsableEpsilon("--epsilon", *f.epsilon));
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", *f.delta));
  o.epsilon = *f.epsilon;
  o.delta = *f.delta;
  DPEM_ASSIGN_OR_RETURN(o.accountant, ParseAccountantFlag("--accountant", f.accountant));
  StatusOr<NoiseCalibrationRule> rule = ParseNoiseCalibrationRule(f.calibration);
  if (!rule.ok()) return InvalidArgumentError("--calibration: " + rule.status().message());
  o.calibration = *rule;
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

StatusOr<GradientEmOptions> FitOptionsFromFlags(const FitFlags& f) {
  GradientEmOptions o;
  StatusOr<GradientEmMethod> method = ParseGradientEmMethod(f.method);
  if (!method.ok()) return InvalidArgumentError("--method: " + method.status().message());
  o.method = *method;
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", f.iterations, 1));
  if (f.iterations > 100000) return InvalidArgumentError("--iterations: must be <= 100000");
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
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromThreadsFlag(f.threads));
  DPEM_RETURN_IF_ERROR(PrivacyFlagsInto(f, o));
  return o;
}

json GuaranteeJson(const GradientEmFit& fit, const GradientEmOptions& o) {
  const GradientEmGuarantee& g = fit.guarantee;
  json j = {{"private", g.is_private}, {"neighbour_relation", kNeighbourRelation}};
  if (!g.is_private) return j;
  j.update({{"epsilon", g.epsilon},
            {"delta", g.delta},
            {"target_epsilon", g.target_epsilon},
            {"target_delta", g.target_delta},
            {"accountant", AccountantName(g.accountant)},
            {"calibration", NoiseCalibrationRuleName(g.calibration)},
            {"noise_multiplier", g.noise_multiplier},
            {"sensitivity_l2", g.sensitivity},
            {"noise_stddev", g.noise_stddev},
            {"releases", g.ledger.size()},
            {"guarantee_void", g.guarantee_void},
            {"void_reasons", g.void_reasons}});
  if (o.method == GradientEmMethod::kClipped) j["clip"] = o.clip;
  if (o.method != GradientEmMethod::kClipped) {
    j.update({{"tau", o.tau}, {"zeta", o.zeta}, {"robust_scale", g.robust.scale},
              {"robust_beta", g.robust.beta}});
  }
  j["ledger"] = internal::LedgerToJson(g.ledger);
  return j;
}

json FitJson(const FitFlags& f, const GradientEmOptions& o, const GradientEmData& data,
             const GradientEmFit& fit) {
  json j = {{"model", GradientEmModelName(data.model)},
            {"method", GradientEmMethodName(o.method)},
            {"n", data.n()},
            {"d", data.d()},
            {"iterations", o.iterations},
            {"step", o.step},
            {"sigma", o.sigma},
            {"beta", ToVector(fit.beta)},
            {"guarantee", GuaranteeJson(fit, o)}};
  if (f.trajectory) {
    json t = json::array();
    for (const Eigen::VectorXd& b : fit.trajectory) t.push_back(ToVector(b));
    j["trajectory"] = t;
  }
  if (fit.seed) {
    j["seed"] = *fit.seed;
    j["warning"] = kSeededGeneratorWarning;
  }
  return j;
}

// The epsilon a budget is charged: what the accountant certifies for the
// calibrated noise, never less than the target (GradientEmChargedEpsilon).
// The fit fails rather than certify more than this, so the charge always
// covers the guarantee printed. Known before the data is read.
StatusOr<double> BudgetEpsilon(const FitFlags& f, const GradientEmOptions& o) {
  if (f.budget.file.empty() || !o.IsPrivate()) return o.epsilon;
  return GradientEmChargedEpsilon(o);
}

Status RunFit(const FitFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GradientEmModel model, ModelFlag(f.model));
  DPEM_ASSIGN_OR_RETURN(const GradientEmOptions o, FitOptionsFromFlags(f));
  DPEM_RETURN_IF_ERROR(o.Validate());
  DPEM_ASSIGN_OR_RETURN(const double charge, BudgetEpsilon(f, o));
  DPEM_RETURN_IF_ERROR(ChargeBudget(f.budget, f.input, charge, o.delta,
                                    "dpem fit gradient-em"));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix m, ReadMatrix(f.input));
  StatusOr<GradientEmData> data = FromDataMatrix(model, m);
  if (!data.ok()) return InvalidArgumentError(f.input + ": " + data.status().message());
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  StatusOr<GradientEmFit> fit = FitGradientEm(*data, o, gen);
  if (!fit.ok()) return Status(fit.status().code(), f.input + ": " + fit.status().message());
  for (const std::string& reason : fit->guarantee.void_reasons) {
    std::cerr << "dpem fit gradient-em: warning: the privacy guarantee is VOID: " << reason
              << "\n";
  }
  const json out = FitJson(f, o, *data, *fit);
  if (f.json_output) {
    PrintJson(out);
  } else {
    std::cout << "beta: " << json(out["beta"]).dump() << "\n"
              << "guarantee: " << out["guarantee"].dump() << "\n";
  }
  return OkStatus();
}

void AddFitOptions(CLI::App* app, FitFlags& f) {
  app->add_option("--model", f.model, "gmm, mrm or rmc")->required();
  app->add_option("--method", f.method,
                  "dp (Algorithm 2, default), clipped (Algorithm 1), dp-em (Algorithm 3, gmm "
                  "only) or nonprivate (gradient EM)");
  app->add_option("--input", f.input,
                  "Data CSV/.npy: gmm y_1..y_d; mrm y,x_1..x_d; rmc y,x_1..x_d,z_1..z_d")
      ->required();
  app->add_option("--iterations", f.iterations, "Number of iterations T (>= 1), fixed")
      ->required();
  app->add_option("--sigma", f.sigma, "The model's public noise level sigma (> 0); required");
  app->add_option("--epsilon", f.epsilon, "Total epsilon (> 0); required unless nonprivate");
  app->add_option("--delta", f.delta, "Total delta in (0, 1); required unless nonprivate");
  app->add_option("--tau", f.tau,
                  "dp, dp-em: public bound on the second moment of each gradient (or EM-map) "
                  "coordinate; sets the robust scale s. Required, no default");
  app->add_option("--robust-scale", f.robust_scale,
                  "dp, dp-em: the robust scale s (public); default Algorithm 2's "
                  "sqrt(n tau eps~) / (2 sqrt(log(d / zeta)))");
  app->add_option("--clip", f.clip, "clipped: the L2 clipping threshold C; required");
  app->add_option("--step", f.step, "Step size eta (default 1 = 2/(mu+nu), Theorem 4)");
  app->add_option("--zeta", f.zeta, "dp, dp-em: failure probability zeta (default 0.1)");
  app->add_option("--accountant", f.accountant,
                  "Accountant certifying the total: " + AccountantNameList() + " (default rdp)");
  app->add_option("--calibration", f.calibration,
                  "accountant (default: the least noise the accountant certifies) or paper "
                  "(Algorithm 2's sigma^2 = 16 s^2 d T / (9 n^2 eps~^2), exact in zCDP)");
  app->add_option("--init", f.init, "Initial beta, comma-separated (default: random, from --seed)")
      ->delimiter(',');
  app->add_option("--init-norm", f.init_norm, "Norm of the random initial beta (default 1)");
  app->add_option("--seed", f.seed,
                  "Seed a reproducible generator (tests and experiments only). The noise is "
                  "then reproducible from the seed, so a private fit's guarantee is VOID");
  app->add_flag("--json", f.json_output, "Print the result as JSON");
  app->add_flag("--trajectory", f.trajectory, "Include beta^0..beta^T in the output");
  AddThreadsOption(app, &f.threads);
  AddBudgetFlags(app, &f.budget);
}

}  // namespace

Command AddFitGradientEmCommand(CLI::App& fit) {
  auto f = std::make_shared<FitFlags>();
  CLI::App* app = fit.add_subcommand(
      "gradient-em", "DP gradient EM (wang-dp-gradient-em) for gmm, mrm, rmc; prints beta.");
  AddFitOptions(app, *f);
  return {app, [f] { return RunFit(*f); }};
}

Command AddGenerateCommand(CLI::App& root) {
  auto f = std::make_shared<GenerateFlags>();
  CLI::App* app = root.add_subcommand(
      "generate", "Synthetic data of the gradient-EM models (gmm, mrm, rmc) and their truth.");
  app->add_option("--model", f->model, "gmm, mrm or rmc")->required();
  app->add_option("--n", f->n, "Number of records (>= 1)")->required();
  app->add_option("--d", f->d, "Dimension (>= 1)")->required();
  app->add_option("--snr", f->snr, "Signal-to-noise ratio ||beta*|| / sigma (> 0)")->required();
  app->add_option("--sigma", f->sigma, "Noise level sigma (default 1)");
  app->add_option("--missing-prob", f->missing_prob,
                  "rmc: probability that each covariate is missing (default 0)");
  app->add_option("--seed", f->seed, "Seed (default: the operating system's CSPRNG)");
  app->add_option("--output", f->output, "Data file (.csv or .npy)")->required();
  app->add_option("--truth", f->truth, "JSON file for beta* and sigma")->required();
  return {app, [f] { return RunGenerate(*f); }};
}

}  // namespace dpem::cli
