// The public data domain: the core assumption of dpem's privacy guarantee.
//
// Every record x must lie in a public domain, the L2 ball ||x - c||_2 <= R of
// a public radius R (`data_norm`) around a public centre c (`center`, the
// origin by default), both fixed before looking at the data (from domain
// knowledge, a data dictionary, sensor ranges). Sensitivities of every release
// are computed for records in that ball, under the replace-one neighbour
// relation (see ledger.h). Records outside the ball are clipped (projected
// onto it), never rejected in a way that reveals them, and the data are never
// rescaled by a data-derived factor.
//
// The models work on the unit ball: MapToUnitBall subtracts c, clips to radius
// R and divides by R; MapFromUnitBall maps samples/means back (c + R u).
//
// Thread safety: all functions are pure (no shared state).
#ifndef DPEM_DATA_DOMAIN_H_
#define DPEM_DATA_DOMAIN_H_

#include <limits>

#include "dpem/data/matrix.h"
#include "dpem/status.h"

namespace dpem {

// The public domain of the records.
struct DataDomain {
  // The public bound R on the L2 norm of a record. No default: NaN until set,
  // and ValidateDomain refuses NaN, infinity and values <= 0. R must be chosen
  // without looking at the data.
  double data_norm = std::numeric_limits<double>::quiet_NaN();
  // True when R was derived from the data itself (DataNormFromData, the CLI's
  // --data-norm-from-data, or the papers' "scale by the largest norm"). That
  // leaks the largest record and VOIDS the differential privacy guarantee:
  // callers must warn loudly and record it in every output (model files).
  bool from_data = false;
  // The public centre c of the ball, one entry per feature; empty means the
  // origin. Like R it must not be derived from the data (a data mean leaks
  // the data and voids the guarantee just as a data-derived R does).
  Eigen::VectorXd center;
};

// OK if `domain.data_norm` is finite and > 0 and `domain.center` is finite;
// InvalidArgument otherwise. (The size of `center` is checked against the
// data by MapToUnitBall.)
// `from_data` is not an error here (the caller decides and warns).
Status ValidateDomain(const DataDomain& domain);

// The range of R that a model fit (Gaussian mixture, k-means, factor
// analysis) and its model file accept. The models work on the unit ball and
// state their parameters in data units: means and centres c + R u, loadings
// R W, covariances and noise variances R^2 S, and scores squared distances of
// order R^2 summed over records. For R beyond about 1e154 (the square root of
// the largest double, 1.8e308) R^2 overflows, and below about 1e-154 it
// underflows, so the model written would be unusable. The bounds leave a
// factor of 1e108 on either side for noise, eigenvalue floors (1e-6 by
// default), sums over up to 2^53 records and products over dimensions; they
// exceed any physical scale in SI units. Data outside them should be
// expressed in other units.
inline constexpr double kMinModelDataNorm = 1e-100;
inline constexpr double kMaxModelDataNorm = 1e100;

// ValidateDomain, and R in [kMinModelDataNorm, kMaxModelDataNorm]: the
// domain of a model fit or model file. InvalidArgument naming data_norm, its
// value and the limit it breaks.
Status ValidateModelDomain(const DataDomain& domain);

// What MapToUnitBall did.
struct DomainTransformReport {
  // How many records had norm > R and were clipped. This count depends on the
  // private data and is NOT differentially private: it must never be
  // published or written to an output file; show it at most as a local
  // warning to the data owner.
  Eigen::Index clipped_rows = 0;
};

// Subtracts the centre c from each record of `x`, clips it onto the L2 ball
// of radius R = domain.data_norm (a record with ||x - c|| > R is scaled to
// norm R; others are unchanged) and divides it by R. Every output row has L2
// norm <= 1 as computed by Eigen's norm(), squaredNorm() and stableNorm()
// and by a sum of squares in long double, despite rounding (rows still above 1 after scaling are shrunk
// by a few ulps). Rows inside the ball are (x - c) * (1 / R), one rounding
// per element after the correctly rounded 1 / R (within 1.5 ulps of
// (x - c) / R; divided by R instead where 1 / R is not a normal double),
// unless that rounding puts them near or above norm 1: those are redone by
// the careful path.
// Norms are computed without overflow, so values up to the largest double
// are handled. Never rejects a record and never rescales by a data-derived
// factor. `report` may be null.
// Errors: InvalidArgument if ValidateDomain fails, if `center` is neither
// empty nor of size x.cols(), or if `x` has a NaN or infinite value (the
// readers never return one).
StatusOr<DataMatrix> MapToUnitBall(const DataMatrix& x, const DataDomain& domain,
                                   DomainTransformReport* report);

// UNSAFE: the largest L2 norm of a row of `x`, for the explicitly unsafe
// --data-norm-from-data. Using it as R leaks the largest record and VOIDS the
// privacy guarantee; set DataDomain::from_data = true with it. Returns 1 if
// every row is zero. InvalidArgument if `x` has no rows or no columns, or a
// non-finite value.
StatusOr<double> DataNormFromData(const DataMatrix& x);

// u * data_norm: scales unit-ball rows back by R. Ignores any centre; use
// the DataDomain overload when the domain may have one. Precondition:
// `data_norm` passed ValidateDomain.
DataMatrix MapFromUnitBall(const DataMatrix& u, double data_norm);

// c + R u for each row u of `u`: the inverse of MapToUnitBall for rows inside
// the ball. Precondition: ValidateDomain(domain) is OK and `domain.center` is
// empty or has u.cols() entries.
DataMatrix MapFromUnitBall(const DataMatrix& u, const DataDomain& domain);

}  // namespace dpem

#endif  // DPEM_DATA_DOMAIN_H_
