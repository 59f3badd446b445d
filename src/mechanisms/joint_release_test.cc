// Brute-force checks of JointSensitivity (docs/privacy.md, Theorem 1) and of
// DefaultJointNoiseSplit.
//
// The objective is written here independently of joint_release.cc: for a
// record x (||x|| <= 1) with responsibilities g in the simplex, the
// block-normalised contribution is the explicit vector
//   c(x, g) = (g_k / s_n, g_k x / s_1, g_k T(x) / s_2)_{k = 1..K},
// with T(x) in the released representation (full: upper triangle of x x^T,
// off-diagonal entries times sqrt(2); diagonal: x (.) x; spherical: ||x||^2),
// and the squared sensitivity is the maximum of ||c(x, g) - c(x', g')||^2.
// The search combines (a) random pairs in the ball, on the sphere, at vertices
// and inside the simplex, (b) adversarial pairs (x' = -x, x' orthogonal to x,
// x . x' = -b / (2 a r q) on a grid of radii, in generic and coordinate-aligned
// forms; the latter attain the diagonal bound) and (c) a local random-search
// ascent from the best point found.
//
// Results (Release build, 540 problems: 3 covariance types x K in {2, 3} x
// d in {1, 2, 3} x 30 scale triples; printed by the test):
//   full, diagonal, d >= 2: observed max / bound^2 = 1 (to 1e-9): the bound
//     is attained, in both regimes (b <= 2a and b > 2a) and in both branches
//     (different components, same component).
//   full, diagonal, d = 1: the representations all reduce to ||x||^2, the
//     angle can only be 0 or pi, and the exact value is
//     max(2/s_n^2 + 2/a + 2/b, 4/a); the bound is valid but not always
//     attained (observed / bound^2 down to 0.896 = 16.125 / 18 where the
//     same-component branch with b <= 2a is binding).
//   spherical: the exact value is max(2/s_n^2 + 2/a + 2/b, 4/a)
//     (docs/privacy.md, Theorem 1, part 2) and the brute force attains it; the
//     library's bound max(..., 4/a + 1/b) is valid but loose where the
//     same-component branch binds (observed / bound^2 down to 0.806 =
//     16.125 / 20 on this grid).
#include "dpem/mechanisms/joint_release.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dpem/mechanisms/additive_noise.h"
#include "dpem/models/gmm/gmm.h"

namespace dpem {
namespace {

using Vec = std::vector<double>;

struct Problem {
  CovarianceType type;
  int k;  // Components.
  int d;  // Dimension.
  JointNoiseScales s;
};

std::string Describe(const Problem& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s K=%d d=%d s_n=%g s_1=%g s_2=%g",
                std::string(CovarianceTypeName(p.type)).c_str(), p.k, p.d, p.s.counts,
                p.s.sums, p.s.second);
  return buf;
}

// T(x) in the released representation.
void SecondMoment(CovarianceType type, const Vec& x, Vec& out) {
  out.clear();
  const int d = static_cast<int>(x.size());
  switch (type) {
    case CovarianceType::kFull:
      for (int i = 0; i < d; ++i) {
        for (int j = i; j < d; ++j) {
          out.push_back(i == j ? x[i] * x[i] : std::sqrt(2.0) * x[i] * x[j]);
        }
      }
      break;
    case CovarianceType::kDiagonal:
      for (int i = 0; i < d; ++i) out.push_back(x[i] * x[i]);
      break;
    case CovarianceType::kSpherical: {
      double n2 = 0.0;
      for (double v : x) n2 += v * v;
      out.push_back(n2);
      break;
    }
  }
}

// Evaluates ||c(x, g) - c(x', g')||^2 by building both contributions as
// explicit vectors (buffers reused to avoid allocation in the inner loops).
class Objective {
 public:
  explicit Objective(const Problem& p) : p_(p) {}

  void Contribution(const Vec& x, const Vec& g, Vec& out) {
    SecondMoment(p_.type, x, t_);
    out.clear();
    for (int k = 0; k < p_.k; ++k) {
      out.push_back(g[k] / p_.s.counts);
      for (double v : x) out.push_back(g[k] * v / p_.s.sums);
      for (double v : t_) out.push_back(g[k] * v / p_.s.second);
    }
  }

  double operator()(const Vec& x, const Vec& xp, const Vec& g, const Vec& gp) {
    Contribution(x, g, c_);
    Contribution(xp, gp, cp_);
    double sum = 0.0;
    for (size_t i = 0; i < c_.size(); ++i) sum += (c_[i] - cp_[i]) * (c_[i] - cp_[i]);
    return sum;
  }

 private:
  Problem p_;
  Vec t_, c_, cp_;
};

double Norm(const Vec& v) {
  double s = 0.0;
  for (double e : v) s += e * e;
  return std::sqrt(s);
}

class Searcher {
 public:
  Searcher(const Problem& p, uint64_t seed) : p_(p), f_(p), rng_(seed) {}

  Vec Sphere() {
    Vec v(p_.d);
    do {
      for (double& e : v) e = normal_(rng_);
    } while (Norm(v) < 1e-12);
    const double n = Norm(v);
    for (double& e : v) e /= n;
    return v;
  }
  Vec Ball() {
    Vec v = Sphere();
    const double r = std::pow(unif_(rng_), 1.0 / p_.d);
    for (double& e : v) e *= r;
    return v;
  }
  Vec Vertex(int i) {
    Vec g(p_.k, 0.0);
    g[i] = 1.0;
    return g;
  }
  Vec Dirichlet(double alpha) {
    std::gamma_distribution<double> gamma(alpha, 1.0);
    Vec g(p_.k);
    double s = 0.0;
    for (double& e : g) s += (e = gamma(rng_));
    if (!(s > 0.0)) return Vertex(0);
    for (double& e : g) e /= s;
    return g;
  }
  Vec RandomSimplex() {
    switch (std::uniform_int_distribution<int>(0, 2)(rng_)) {
      case 0:
        return Vertex(std::uniform_int_distribution<int>(0, p_.k - 1)(rng_));
      case 1:
        return Dirichlet(1.0);
      default:
        return Dirichlet(0.2);  // Near a face.
    }
  }

  void Consider(const Vec& x, const Vec& xp, const Vec& g, const Vec& gp) {
    const double v = f_(x, xp, g, gp);
    if (v > best_) {
      best_ = v;
      bx_ = x, bxp_ = xp, bg_ = g, bgp_ = gp;
    }
  }

  // (a) Random pairs.
  void RandomPhase(int samples) {
    for (int i = 0; i < samples; ++i) {
      const Vec x = unif_(rng_) < 0.5 ? Ball() : Sphere();
      const Vec xp = unif_(rng_) < 0.5 ? Ball() : Sphere();
      Consider(x, xp, RandomSimplex(), RandomSimplex());
    }
  }

  // (b) Adversarial pairs: x = r u, x' = q (c u + sqrt(1 - c^2) v) for an
  // orthonormal pair (u, v) (generic random, or e_1, e_2), and the form
  // x = r (cos w, sin w, 0...), x' = sign(c) q (sin w, cos w, 0...) with
  // sin 2w = |c|, whose outer products have equal off-diagonal parts (it
  // attains the bound for diagonal covariances).
  void AdversarialPhase(int radius_steps) {
    const double a = p_.s.sums * p_.s.sums, b = p_.s.second * p_.s.second;
    const Vec e0 = Vertex(0), e1 = p_.k > 1 ? Vertex(1) : Vertex(0);
    const std::vector<std::pair<Vec, Vec>> gs = {{e0, e0}, {e0, e1}};
    Vec u = Sphere(), v(p_.d, 0.0), cu(p_.d, 0.0), cv(p_.d, 0.0);
    cu[0] = 1.0;
    if (p_.d >= 2) {
      cv[1] = 1.0;
      v = Sphere();  // Gram-Schmidt against u.
      double dot = 0.0;
      for (int i = 0; i < p_.d; ++i) dot += u[i] * v[i];
      for (int i = 0; i < p_.d; ++i) v[i] -= dot * u[i];
      const double n = Norm(v);
      for (double& e : v) e /= n;
    }
    Vec x(p_.d), xp(p_.d);
    for (int i = 0; i <= radius_steps; ++i) {
      for (int j = 0; j <= radius_steps; ++j) {
        const double r = static_cast<double>(i) / radius_steps;
        const double q = static_cast<double>(j) / radius_steps;
        std::vector<double> angles = {-1.0, 1.0};
        if (p_.d >= 2) {
          angles.push_back(0.0);
          angles.push_back(std::clamp(-b / (2.0 * a), -1.0, 1.0));
          if (r * q > 0.0) angles.push_back(std::clamp(-b / (2.0 * a * r * q), -1.0, 1.0));
        }
        for (double c : angles) {
          const double sc = std::sqrt(std::max(0.0, 1.0 - c * c));
          for (int form = 0; form < (p_.d >= 2 ? 3 : 1); ++form) {
            if (form < 2) {
              const Vec& uu = form == 0 ? u : cu;
              const Vec& vv = form == 0 ? v : cv;
              for (int t = 0; t < p_.d; ++t) {
                x[t] = r * uu[t];
                xp[t] = q * (c * uu[t] + (p_.d >= 2 ? sc * vv[t] : 0.0));
              }
            } else {
              const double w = 0.5 * std::asin(std::fabs(c));
              const double sign = c < 0.0 ? -1.0 : 1.0;
              std::fill(x.begin(), x.end(), 0.0);
              std::fill(xp.begin(), xp.end(), 0.0);
              x[0] = r * std::cos(w), x[1] = r * std::sin(w);
              xp[0] = sign * q * std::sin(w), xp[1] = sign * q * std::cos(w);
            }
            for (const auto& [g, gp] : gs) Consider(x, xp, g, gp);
          }
        }
      }
    }
  }

  // (c) Local ascent: Gaussian perturbations with a shrinking step, projected
  // back (x into the ball by scaling, g onto the simplex by clamping at 0 and
  // renormalising), from the best point found so far and from `restarts`
  // random starting points (so that the search does not rely only on the
  // adversarial constructions).
  void LocalPhase(int steps, int restarts) {
    Ascend(bx_, bxp_, bg_, bgp_, steps);
    for (int i = 0; i < restarts; ++i) {
      Ascend(Ball(), Ball(), RandomSimplex(), RandomSimplex(), steps / 2);
    }
  }

  void Ascend(Vec cx, Vec cxp, Vec cg, Vec cgp, int steps) {
    double current = f_(cx, cxp, cg, cgp);
    Consider(cx, cxp, cg, cgp);
    for (int it = 0; it < steps; ++it) {
      const double step = 0.3 * std::pow(1e-4 / 0.3, static_cast<double>(it) / steps);
      Vec x = cx, xp = cxp, g = cg, gp = cgp;
      const auto move_x = [&](Vec& y) {
        for (double& e : y) e += step * normal_(rng_);
        const double n = Norm(y);
        if (n > 1.0) {
          for (double& e : y) e /= n;
        }
      };
      const auto move_g = [&](Vec& h) {
        double s = 0.0;
        for (double& e : h) s += (e = std::max(0.0, e + step * normal_(rng_)));
        if (!(s > 0.0)) {
          h = Vertex(0);
          return;
        }
        for (double& e : h) e /= s;
      };
      const int what = std::uniform_int_distribution<int>(0, 4)(rng_);
      if (what == 0 || what == 4) move_x(x);
      if (what == 1 || what == 4) move_x(xp);
      if (what == 2 || what == 4) move_g(g);
      if (what == 3 || what == 4) move_g(gp);
      const double v = f_(x, xp, g, gp);
      if (v > current) {
        current = v;
        cx = std::move(x), cxp = std::move(xp), cg = std::move(g), cgp = std::move(gp);
        Consider(cx, cxp, cg, cgp);
      }
    }
  }

  double best() const { return best_; }
  std::string Witness() const {
    std::string out;
    const auto app = [&](const char* name, const Vec& v) {
      out += name;
      out += "=(";
      for (size_t i = 0; i < v.size(); ++i) {
        char b[32];
        std::snprintf(b, sizeof b, "%s%.4f", i ? "," : "", v[i]);
        out += b;
      }
      out += ") ";
    };
    app("x", bx_), app("x'", bxp_), app("g", bg_), app("g'", bgp_);
    return out;
  }

 private:
  Problem p_;
  Objective f_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::uniform_real_distribution<double> unif_{0.0, 1.0};
  double best_ = -1.0;
  Vec bx_, bxp_, bg_, bgp_;
};

double DifferentComponents(const JointNoiseScales& s) {
  return 2.0 / (s.counts * s.counts) + 2.0 / (s.sums * s.sums) + 2.0 / (s.second * s.second);
}

// The exact value where every second-moment representation reduces to
// ||x||^2 (spherical, any d; all types for d = 1): docs/privacy.md,
// Theorem 1, part 2.
double ExactTraceCase(const JointNoiseScales& s) {
  return std::max(DifferentComponents(s), 4.0 / (s.sums * s.sums));
}

std::vector<JointNoiseScales> ScaleGrid() {
  std::vector<JointNoiseScales> out;
  for (double sn : {0.25, 1.0, 4.0}) {
    for (double s1 : {0.5, 1.5}) {
      for (double s2 : {0.1, 0.5, 1.0, 1.5, 3.0}) out.push_back({sn, s1, s2});
    }
  }
  return out;
}

TEST(JointReleaseTest, SqrtTwoScaledUpperTriangleHasFrobeniusNorm) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (int d = 1; d <= 4; ++d) {
    Vec x(d), xp(d), t, tp;
    for (double& e : x) e = normal(rng);
    for (double& e : xp) e = normal(rng);
    SecondMoment(CovarianceType::kFull, x, t);
    SecondMoment(CovarianceType::kFull, xp, tp);
    double released = 0.0, frobenius = 0.0;
    for (size_t i = 0; i < t.size(); ++i) released += (t[i] - tp[i]) * (t[i] - tp[i]);
    for (int i = 0; i < d; ++i) {
      for (int j = 0; j < d; ++j) {
        const double m = x[i] * x[j] - xp[i] * xp[j];
        frobenius += m * m;
      }
    }
    EXPECT_NEAR(released, frobenius, 1e-12 * frobenius);
  }
}

TEST(JointReleaseTest, BruteForceNeverExceedsBoundAndAttainsIt) {
  struct Summary {
    double min_ratio = INFINITY, max_ratio = 0.0, min_exact_ratio = INFINITY;
    std::string worst;
    int problems = 0;
  };
  Summary summary[3][2];  // [type][d == 1 ? 0 : 1]
  int same_branch_binding = 0, different_branch_binding = 0, regime_small_b = 0,
      regime_large_b = 0;
  uint64_t seed = 20240611;
  for (CovarianceType type :
       {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
    for (int k : {2, 3}) {
      for (int d : {1, 2, 3}) {
        for (const JointNoiseScales& s : ScaleGrid()) {
          const Problem p{type, k, d, s};
          Searcher search(p, ++seed);
          search.RandomPhase(1000);
          search.AdversarialPhase(20);
          search.LocalPhase(1500, 8);
          const double observed = search.best();
          const double bound = JointSensitivity(type, s);
          SCOPED_TRACE(Describe(p) + " witness " + search.Witness());
          // Soundness: the most important check.
          EXPECT_LE(std::sqrt(observed), bound * (1.0 + 1e-12));
          const double ratio = observed / (bound * bound);
          const double a = s.sums * s.sums, b = s.second * s.second;
          const bool trace_like = type == CovarianceType::kSpherical || d == 1;
          double exact_ratio = ratio;
          if (trace_like) {
            exact_ratio = observed / ExactTraceCase(s);
            EXPECT_GE(exact_ratio, 0.97);
            EXPECT_LE(observed, ExactTraceCase(s) * (1.0 + 1e-12));
          } else {
            // Full and diagonal, d >= 2: the bound is attained.
            EXPECT_GE(ratio, 0.97);
            if (bound * bound > DifferentComponents(s) * (1.0 + 1e-9)) {
              ++same_branch_binding;
            } else {
              ++different_branch_binding;
            }
            (b <= 2.0 * a ? regime_small_b : regime_large_b) += 1;
          }
          Summary& sum = summary[static_cast<int>(type)][d == 1 ? 0 : 1];
          ++sum.problems;
          sum.max_ratio = std::max(sum.max_ratio, ratio);
          sum.min_exact_ratio = std::min(sum.min_exact_ratio, exact_ratio);
          if (ratio < sum.min_ratio) {
            sum.min_ratio = ratio;
            sum.worst = Describe(p) + " " + search.Witness();
          }
        }
      }
    }
  }
  // Both branches and both regimes of the matrix bound were exercised.
  EXPECT_GT(same_branch_binding, 0);
  EXPECT_GT(different_branch_binding, 0);
  EXPECT_GT(regime_small_b, 0);
  EXPECT_GT(regime_large_b, 0);
  const char* names[3] = {"full", "diagonal", "spherical"};
  for (int t = 0; t < 3; ++t) {
    for (int dd = 0; dd < 2; ++dd) {
      const Summary& sum = summary[t][dd];
      std::printf(
          "[joint sensitivity] %-9s %s: %3d problems, observed/bound^2 in [%.9f, %.12f], "
          "observed/exact >= %.9f\n  lowest: %s\n",
          names[t], dd == 0 ? "d=1  " : "d=2,3", sum.problems, sum.min_ratio, sum.max_ratio,
          sum.min_exact_ratio, sum.worst.c_str());
    }
  }
  std::printf("[joint sensitivity] matrix cases: same-component branch binding %d, "
              "different-component %d; b<=2a %d, b>2a %d\n",
              same_branch_binding, different_branch_binding, regime_small_b, regime_large_b);
}

// Hand-checked values of the closed forms.
TEST(JointReleaseTest, ClosedFormValues) {
  // a = b = 1, s_n = 4: different 2/16 + 4 = 4.125; same 2 + 2 + 1/2 = 4.5.
  EXPECT_NEAR(JointSensitivity(CovarianceType::kFull, {4.0, 1.0, 1.0}), std::sqrt(4.5), 1e-15);
  EXPECT_NEAR(JointSensitivity(CovarianceType::kDiagonal, {4.0, 1.0, 1.0}), std::sqrt(4.5),
              1e-15);
  // b = 9 > 2a = 2: same 4/a = 4; different 2/16 + 2 + 2/9.
  EXPECT_NEAR(JointSensitivity(CovarianceType::kFull, {4.0, 1.0, 3.0}), 2.0, 1e-15);
  // Counts dominate: s_n = 0.5: 8 + 2 + 2 = 12.
  EXPECT_NEAR(JointSensitivity(CovarianceType::kFull, {0.5, 1.0, 1.0}), std::sqrt(12.0), 1e-15);
  // Spherical, exact (Theorem 1 (2)): max(2/16 + 2 + 2, 4/1) = 4.125.
  EXPECT_NEAR(JointSensitivity(CovarianceType::kSpherical, {4.0, 1.0, 1.0}), std::sqrt(4.125),
              1e-15);
}

double SplitLoss(CovarianceType type, int d, int k, const JointNoiseScales& s) {
  const double m = type == CovarianceType::kFull       ? d * d
                   : type == CovarianceType::kDiagonal ? d
                                                       : 1.0 / d;
  return (1.0 + 1.0 / k) * s.counts * s.counts + d * s.sums * s.sums + m * s.second * s.second;
}

// Rescales s to JointSensitivity 1 (the sensitivity is homogeneous of degree
// -1 in the scales).
JointNoiseScales Normalised(CovarianceType type, JointNoiseScales s) {
  const double delta = JointSensitivity(type, s);
  return {s.counts * delta, s.sums * delta, s.second * delta};
}

TEST(JointReleaseTest, DefaultSplitHasUnitSensitivityAndBeatsAlternatives) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> log_ratio(-2.0, 2.0);
  for (CovarianceType type :
       {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
    for (int d : {1, 2, 3, 10}) {
      for (int k : {1, 2, 3, 10}) {
        SCOPED_TRACE(std::string(CovarianceTypeName(type)) + " d=" + std::to_string(d) +
                     " K=" + std::to_string(k));
        const JointNoiseScales s = DefaultJointNoiseSplit(type, d, k);
        EXPECT_GT(s.counts, 0.0);
        EXPECT_GT(s.sums, 0.0);
        EXPECT_GT(s.second, 0.0);
        EXPECT_NEAR(JointSensitivity(type, s), 1.0, 1e-12);
        const double loss = SplitLoss(type, d, k, s);
        // Hand-picked alternatives on the search grid (ratios 10^(0.05 i)):
        // no worse than any of them.
        for (const JointNoiseScales& alt : std::vector<JointNoiseScales>{
                 {1.0, 1.0, 1.0}, {10.0, 1.0, 1.0}, {1.0, 1.0, 10.0}, {0.1, 1.0, 0.1},
                 {std::sqrt(10.0), 1.0, std::sqrt(10.0)}, {1.0, 1.0, 0.1}}) {
          const JointNoiseScales n = Normalised(type, alt);
          EXPECT_NEAR(JointSensitivity(type, n), 1.0, 1e-12);
          EXPECT_LE(loss, SplitLoss(type, d, k, n) * (1.0 + 1e-12));
        }
        // Off-grid alternatives: within the grid's resolution (1% of the loss).
        for (int i = 0; i < 200; ++i) {
          const JointNoiseScales n = Normalised(
              type, {std::pow(10.0, log_ratio(rng)), 1.0, std::pow(10.0, log_ratio(rng))});
          EXPECT_LE(loss, SplitLoss(type, d, k, n) * 1.01);
        }
      }
    }
  }
}

// ---- ReleaseJointStatistics: the noise and what the ledger records. ----

constexpr double kZ = 2.0;     // Noise multiplier of the release tests.
constexpr int kNoiseRuns = 2000;

// K = 2 components in d = 2 (values arbitrary, symmetric second moments).
GmmStatistics SmallStatistics(CovarianceType type, double scale = 1.0) {
  GmmStatistics s;
  s.type = type;
  s.n = 10;
  s.counts = Eigen::Vector2d(4.0, 6.0) * scale;
  s.sums = (Eigen::MatrixXd(2, 2) << 0.5, -0.25, 1.0, 0.75).finished() * scale;
  const Eigen::MatrixXd a = (Eigen::MatrixXd(2, 2) << 1.5, 0.3, 0.3, 0.7).finished() * scale;
  if (type == CovarianceType::kFull) s.second_full = {a, 2.0 * a};
  if (type == CovarianceType::kDiagonal) s.second_diag = Eigen::MatrixXd::Constant(2, 2, scale);
  if (type == CovarianceType::kSpherical) s.second_trace = Eigen::Vector2d(2.2, 3.1) * scale;
  return s;
}

// Released coordinates of SmallStatistics: K + K d + K (d (d + 1) / 2 | d | 1).
double SmallCoordinates(CovarianceType type) {
  return 2 + 4 + (type == CovarianceType::kFull ? 6 : type == CovarianceType::kDiagonal ? 4 : 2);
}

// The noise of one release as (block-normalised value, block) pairs: block 0
// counts, 1 sums, 2 second-moment diagonal / trace, 3 full off-diagonal.
// The normalised value divides by the block's scale (split_2 / sqrt(2) off
// the diagonal), so with noise scale sigma every block's noise is N(0, sigma^2).
std::vector<std::pair<double, int>> NoiseCoordinates(const GmmStatistics& s,
                                               const JointNoiseScales& w) {
  std::vector<std::pair<double, int>> out;
  for (double v : s.counts) out.push_back({v / w.counts, 0});
  for (double v : s.sums.reshaped()) out.push_back({v / w.sums, 1});
  for (const Eigen::MatrixXd& m : s.second_full) {
    for (int i = 0; i < 2; ++i) {
      out.push_back({m(i, i) / w.second, 2});
      for (int j = i + 1; j < 2; ++j) out.push_back({std::sqrt(2.0) * m(i, j) / w.second, 3});
    }
  }
  for (double v : s.second_diag.reshaped()) out.push_back({v / w.second, 2});
  for (double v : s.second_trace) out.push_back({v / w.second, 2});
  return out;
}

TEST(JointReleaseTest, NoiseHasTheBlockScalesAndTheLedgerTheRelease) {
  const JointNoiseScales split{0.7, 1.3, 2.1};
  for (NoiseSampling sampling : {NoiseSampling::kContinuous, NoiseSampling::kDiscrete}) {
    for (CovarianceType type :
         {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
      const bool discrete = sampling == NoiseSampling::kDiscrete;
      SCOPED_TRACE(std::string(CovarianceTypeName(type)) + (discrete ? " discrete" : ""));
      const GmmStatistics base = SmallStatistics(type);
      const auto exact = NoiseCoordinates(base, split);
      const double delta = JointSensitivity(type, split);
      // Granularity rule of additive_noise.h: 2^floor(log2(z Delta)) / 2^20.
      const double g = std::ldexp(std::exp2(std::floor(std::log2(kZ * delta))), -kDiscreteGridBits);
      // additive_noise.h, "What is computed": the floating-point margin
      // 2^-19, the exact sums' quantum 2^-52 over the smallest weight
      // (an off-diagonal entry's, 2.1 / sqrt(2), or the counts' 0.7), and
      // 5/4 g per sqrt(coordinate).
      const double quantum = std::exp2(-52.0) / std::min(0.7, 2.1 / std::sqrt(2.0));
      const double charged = delta * (1 + std::exp2(-19.0)) +
                             (quantum + 1.25 * g) * std::sqrt(SmallCoordinates(type));
      Generator gen = Generator::FromSeed(31);
      PrivacyLedger ledger;
      double sq[4] = {0, 0, 0, 0}, n[4] = {0, 0, 0, 0};
      for (int run = 0; run < kNoiseRuns; ++run) {
        GmmStatistics s = base;
        ASSERT_TRUE(ReleaseJointStatistics(s, split, kZ, "r", gen, ledger, sampling).ok());
        EXPECT_TRUE(std::isnan(s.log_likelihood));
        for (const Eigen::MatrixXd& m : s.second_full) EXPECT_EQ(m(0, 1), m(1, 0));
        const auto noisy = NoiseCoordinates(s, split);
        ASSERT_EQ(noisy.size(), static_cast<size_t>(SmallCoordinates(type)));
        for (size_t i = 0; i < noisy.size(); ++i) {
          const double e = noisy[i].first - exact[i].first;
          sq[noisy[i].second] += e * e;
          n[noisy[i].second] += 1;
          // Discrete: every normalised output is an integer number of grid units.
          const double units = noisy[i].first / g;
          if (discrete) ASSERT_NEAR(units, std::nearbyint(units), 1e-6) << i;
        }
      }
      ASSERT_EQ(ledger.size(), static_cast<size_t>(kNoiseRuns));
      const Release& r = ledger.releases()[0];
      EXPECT_EQ(r.mechanism, MechanismKind::kGaussian);
      EXPECT_GE(r.NoiseMultiplier(), kZ);
      if (discrete) {  // The charged sensitivity, and t g >= z Delta' with t an integer.
        EXPECT_GE(r.sensitivity, charged);
        EXPECT_LE(r.sensitivity, charged * (1 + 1e-15));
        EXPECT_EQ(r.noise_scale / g, std::ceil(r.noise_scale / g));
        EXPECT_LT(r.noise_scale, kZ * r.sensitivity + g);
      } else {
        EXPECT_EQ(r.sensitivity, delta);
        EXPECT_EQ(r.noise_scale, std::nextafter(kZ * delta, INFINITY));
      }
      for (int b = 0; b < 4; ++b) {  // Relative sd of the estimate about 1.1% (counts).
        if (n[b] > 0) EXPECT_NEAR(std::sqrt(sq[b] / n[b]) / r.noise_scale, 1.0, 0.07) << b;
      }
    }
  }
}

TEST(JointReleaseTest, DiscreteGridDependsOnPublicQuantitiesOnly) {
  const JointNoiseScales split = DefaultJointNoiseSplit(CovarianceType::kFull, 2, 2);
  PrivacyLedger ledger;
  Generator gen = Generator::FromSeed(32);
  for (double scale : {1.0, 1e-3, 250.0}) {
    GmmStatistics s = SmallStatistics(CovarianceType::kFull, scale);
    ASSERT_TRUE(ReleaseJointStatistics(s, split, kZ, "r", gen, ledger).ok());  // Default.
  }
  for (const Release& r : ledger.releases()) {
    EXPECT_EQ(r.sensitivity, ledger.releases()[0].sensitivity);
    EXPECT_EQ(r.noise_scale, ledger.releases()[0].noise_scale);
  }
  EXPECT_GT(ledger.releases()[0].sensitivity, JointSensitivity(CovarianceType::kFull, split));
}

TEST(JointReleaseTest, ErrorsRecordNothingAndLeaveTheStatistics) {
  const JointNoiseScales split{1.0, 1.0, 1.0};
  Generator gen = Generator::FromSeed(33);
  PrivacyLedger ledger;
  GmmStatistics bad = SmallStatistics(CovarianceType::kSpherical);
  bad.sums(0, 0) = NAN;
  for (NoiseSampling sampling : {NoiseSampling::kContinuous, NoiseSampling::kDiscrete}) {
    EXPECT_EQ(ReleaseJointStatistics(bad, split, kZ, "r", gen, ledger, sampling).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(ReleaseJointStatistics(bad, split, 0.0, "r", gen, ledger, sampling).code(),
              StatusCode::kInvalidArgument);
  }
  GmmStatistics good = SmallStatistics(CovarianceType::kSpherical);
  EXPECT_EQ(ReleaseJointStatistics(good, split, kZ, "r", gen, ledger,
                                   static_cast<NoiseSampling>(7))
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(good.counts, SmallStatistics(CovarianceType::kSpherical).counts);
  EXPECT_EQ(good.log_likelihood, 0.0);
  EXPECT_EQ(ledger.size(), 0u);
}

}  // namespace
}  // namespace dpem

namespace dpem {
namespace {

// CheckJointRelease refuses, on public values and drawing nothing, exactly
// the joint releases that ReleaseJointStatistics refuses: here a discrete
// release of K = 10 full 100-dimensional components (51,510 coordinates)
// whose multiplier is so large that the rounding charge leaves no grid.
TEST(CheckJointReleaseTest, AgreesWithTheRelease) {
  const JointNoiseScales split = DefaultJointNoiseSplit(CovarianceType::kFull, 100, 10);
  for (double z : {10.0, 1e5}) {
    const Status check = CheckJointRelease(CovarianceType::kFull, split, z, 10, 100);
    GmmStatistics zero;
    zero.type = CovarianceType::kFull;
    zero.counts = Eigen::VectorXd::Zero(10);
    zero.sums = Eigen::MatrixXd::Zero(10, 100);
    zero.second_full.assign(10, Eigen::MatrixXd::Zero(100, 100));
    Generator gen = Generator::FromSeed(1);
    PrivacyLedger ledger;
    const Status release = ReleaseJointStatistics(zero, split, z, "r", gen, ledger);
    EXPECT_EQ(check.ok(), release.ok()) << "z = " << z << ": " << check.ToString();
    EXPECT_EQ(check.ok(), z == 10.0);
  }
  EXPECT_TRUE(CheckJointRelease(CovarianceType::kFull, split, 1e5, 10, 100,
                                NoiseSampling::kContinuous)
                  .ok());
  EXPECT_FALSE(CheckJointRelease(CovarianceType::kFull, {0.0, 1.0, 1.0}, 10.0, 10, 100).ok());
}

}  // namespace
}  // namespace dpem
