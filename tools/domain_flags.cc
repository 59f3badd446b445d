// The fit commands' domain flags: see domain_flags.h.
#include "domain_flags.h"

#include <cstdlib>
#include <string>

#include "bounds_flags.h"
#include "cli_common.h"

namespace dpem::cli {

void AddDomainFlags(CLI::App* app, DomainFlags& f, bool allow_from_data) {
  app->add_option("--data-norm", f.data_norm_text,
                  "Public bound R on the L2 norm of a record (after --data-center); records "
                  "beyond it are clipped, from 1e-100 to 1e100 (the model's parameters scale "
                  "with R^2). Required for private fits; no default. 'auto': "
                  "release centre and R from the data at --bounds-epsilon of the total "
                  "epsilon (docs/bounds.md)");
  app->add_option("--bounds-epsilon", f.bounds_epsilon,
                  "With --data-norm auto: the pure epsilon spent on the domain, in (0, "
                  "--epsilon); the fit gets the rest (basic composition)");
  app->add_option("--bounds", f.bounds_file,
                  "A domain released by 'dpem bounds --output' (its cost is charged there): "
                  "sets --data-norm and --data-center");
  app->add_option("--data-center", f.data_center,
                  "Public centre c of the domain, comma-separated (default: the origin)")
      ->delimiter(',');
  if (!allow_from_data) return;
  app->add_flag("--data-norm-from-data", f.data_norm_from_data,
                "Take R from the data's largest norm. This reveals the largest record: the "
                "model is marked as having NO valid privacy guarantee");
}

Status ParseDomainFlags(DomainFlags& f) {
  if (!f.bounds_file.empty()) {
    if (f.data_norm_text || !f.data_center.empty() || f.bounds_epsilon) {
      return InvalidArgumentError(
          "--bounds excludes --data-norm, --data-center and --bounds-epsilon");
    }
    DPEM_ASSIGN_OR_RETURN(const DataDomain d, ReadBoundsFile(f.bounds_file));
    f.data_norm = d.data_norm;
    f.data_center.assign(d.center.data(), d.center.data() + d.center.size());
    return OkStatus();
  }
  f.data_norm_auto = f.data_norm_text && *f.data_norm_text == "auto";
  if (f.data_norm_auto != f.bounds_epsilon.has_value()) {
    return InvalidArgumentError("--bounds-epsilon goes with --data-norm auto, and it needs one");
  }
  if (f.data_norm_auto) {
    if (!f.data_center.empty()) {
      return InvalidArgumentError("--data-norm auto releases the centre too: no --data-center");
    }
    return RequireUsableEpsilon("--bounds-epsilon", *f.bounds_epsilon);
  }
  if (!f.data_norm_text) return OkStatus();
  char* end = nullptr;
  const double v = std::strtod(f.data_norm_text->c_str(), &end);
  if (f.data_norm_text->empty() || *end != '\0') {
    return InvalidArgumentError("--data-norm: a number or auto, got " + *f.data_norm_text);
  }
  f.data_norm = v;
  return OkStatus();
}

Status DomainFlagsInto(const DomainFlags& f, bool is_private, double epsilon,
                       DataDomain& domain) {
  domain.from_data = f.data_norm_from_data;
  if (f.data_norm) {
    DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--data-norm", *f.data_norm));
    domain.data_norm = *f.data_norm;
    // Before any data is read: an R whose model cannot be represented.
    if (Status s = ValidateModelDomain(domain); !s.ok()) {
      const std::string flag = f.bounds_file.empty() ? "--data-norm" : "--bounds " + f.bounds_file;
      return InvalidArgumentError(flag + ": " + s.message());
    }
  }
  // Placeholder until the pipeline releases the domain (RunFit, step 6); never used.
  if (f.data_norm_auto) domain.data_norm = 1.0;
  if (!f.data_center.empty()) {
    domain.center = Eigen::Map<const Eigen::VectorXd>(
        f.data_center.data(), static_cast<Eigen::Index>(f.data_center.size()));
  }
  if (!is_private) {
    if (f.data_norm_auto) return InvalidArgumentError("--data-norm auto needs a private fit");
    return OkStatus();
  }
  if (f.data_norm_auto && !(*f.bounds_epsilon < epsilon)) {
    return InvalidArgumentError("--bounds-epsilon must be below --epsilon");
  }
  if (f.data_norm_auto && f.data_norm_from_data) {
    return InvalidArgumentError("--data-norm auto and --data-norm-from-data exclude each other");
  }
  if (f.data_norm && f.data_norm_from_data) {
    return InvalidArgumentError("--data-norm and --data-norm-from-data exclude each other");
  }
  if (!f.data_norm && !f.data_norm_from_data && !f.data_norm_auto) {
    return InvalidArgumentError(
        "--data-norm: a private fit needs the public bound R on the records' norm (a number, "
        "or auto with --bounds-epsilon)");
  }
  return OkStatus();
}

}  // namespace dpem::cli
