// Test support for joint_sensitivity_test.cc: a brute-force search for the
// largest block-normalised distance ||c(x, g) - c(x', g')|| between the
// contributions of two records to a joint release, written independently of
// joint_release.cc (the objective and the search are described in that
// test's header). Not part of the library.
#ifndef DPEM_TESTING_JOINT_SENSITIVITY_SEARCH_H_
#define DPEM_TESTING_JOINT_SENSITIVITY_SEARCH_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/gmm/gmm.h"

namespace dpem::test_support {

using Vec = std::vector<double>;

struct Problem {
  CovarianceType type;
  int k;  // Components.
  int d;  // Dimension.
  JointNoiseScales s;
};

inline std::string Describe(const Problem& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s K=%d d=%d s_n=%g s_1=%g s_2=%g",
                std::string(CovarianceTypeName(p.type)).c_str(), p.k, p.d, p.s.counts,
                p.s.sums, p.s.second);
  return buf;
}

// T(x) in the released representation.
inline void SecondMoment(CovarianceType type, const Vec& x, Vec& out) {
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

inline double Norm(const Vec& v) {
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

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_JOINT_SENSITIVITY_SEARCH_H_
