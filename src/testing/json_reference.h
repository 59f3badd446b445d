// Test support: reference results in JSON (tests/data, written by the
// scikit-learn scripts of scripts/) read into Eigen. Not part of the library;
// the test links nlohmann_json.
#ifndef DPEM_TESTING_JSON_REFERENCE_H_
#define DPEM_TESTING_JSON_REFERENCE_H_

#include <cstddef>
#include <fstream>
#include <string>

#include <Eigen/Core>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace dpem::test_support {

// The JSON document at `path`; a discarded value (is_discarded()) if it does
// not parse, and a failed expectation if it cannot be opened.
inline nlohmann::json LoadJsonReference(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// A matrix from a JSON array of rows of numbers.
inline Eigen::MatrixXd JsonToMatrix(const nlohmann::json& rows) {
  Eigen::MatrixXd m(rows.size(), rows.empty() ? 0 : rows[0].size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < rows[i].size(); ++j) m(i, j) = rows[i][j].get<double>();
  }
  return m;
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_JSON_REFERENCE_H_
