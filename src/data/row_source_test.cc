#include "dpem/data/row_source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dpem/data/csv.h"
#include "dpem/data/io.h"
#include "dpem/data/npy.h"
#include "testing/temp_files.h"

namespace dpem {
namespace {

std::string TempPath(const std::string& name) {
  return test_support::ProcessTempPath("dpem_row_source_test_", name);
}

DataMatrix Sequence(Eigen::Index n, Eigen::Index d) {
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = 0.25 * static_cast<double>(i) - 3;
  return x;
}

// Reads the whole source through blocks of `rows` rows.
DataMatrix ReadAllBlocks(const RowSource& source, Eigen::Index rows) {
  DataMatrix all(source.rows(), source.cols());
  DataMatrix scratch;
  for (Eigen::Index start = 0; start < source.rows(); start += rows) {
    const Eigen::Index count = std::min(rows, source.rows() - start);
    all.middleRows(start, count) = source.Block(start, count, scratch);
  }
  return all;
}

TEST(MatrixRowSourceTest, BorrowsAndOwns) {
  const DataMatrix x = Sequence(10, 3);
  const MatrixRowSource borrowed = *MatrixRowSource::Borrow(x);
  EXPECT_EQ(borrowed.matrix().data(), x.data());
  EXPECT_EQ(ReadAllBlocks(borrowed, 3), x);
  const MatrixRowSource owned = *MatrixRowSource::Own(Sequence(10, 3));
  EXPECT_EQ(ReadAllBlocks(owned, 4), x);
}

TEST(MatrixRowSourceTest, RejectsNonFiniteAndEmptyColumns) {
  DataMatrix x = Sequence(4, 2);
  x(2, 1) = std::numeric_limits<double>::quiet_NaN();
  const StatusOr<MatrixRowSource> s = MatrixRowSource::Borrow(x);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("record 3"), std::string::npos);
  EXPECT_FALSE(MatrixRowSource::Own(DataMatrix(3, 0)).ok());
}

TEST(MatrixRowSourceTest, BorrowsARawRowMajorBufferWithoutCopying) {
  const DataMatrix x = Sequence(7, 3);
  const std::vector<double> buffer(x.data(), x.data() + x.size());
  const MatrixRowSource source = *MatrixRowSource::Borrow(buffer.data(), 7, 3);
  EXPECT_EQ(source.matrix().data(), buffer.data());
  EXPECT_EQ(source.rows(), 7);
  EXPECT_EQ(source.cols(), 3);
  EXPECT_EQ(ReadAllBlocks(source, 2), x);
  EXPECT_EQ(MatrixRowSource::Borrow(nullptr, 0, 2)->rows(), 0);
}

TEST(MatrixRowSourceTest, RawBufferChecksShapeAndValues) {
  std::vector<double> buffer = {1, 2, 3, std::numeric_limits<double>::infinity()};
  const StatusOr<MatrixRowSource> inf = MatrixRowSource::Borrow(buffer.data(), 2, 2);
  EXPECT_EQ(inf.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(inf.status().message().find("record 2"), std::string::npos);
  EXPECT_FALSE(MatrixRowSource::Borrow(buffer.data(), 4, 0).ok());
  EXPECT_FALSE(MatrixRowSource::Borrow(buffer.data(), -1, 2).ok());
  EXPECT_FALSE(MatrixRowSource::Borrow(nullptr, 2, 2).ok());
}

TEST(NpyRowSourceTest, MapsFloat64WithoutCopyingAndMatchesReadNpy) {
  const std::string path = TempPath("f8.npy");
  const DataMatrix x = Sequence(1000, 7);
  ASSERT_TRUE(WriteNpy(path, x).ok());
  const std::unique_ptr<RowSource> source = OpenNpyRowSource(path).value();
  EXPECT_EQ(source->rows(), 1000);
  EXPECT_EQ(source->cols(), 7);
  DataMatrix scratch;
  const RowBlock block = source->Block(10, 5, scratch);
  EXPECT_EQ(scratch.size(), 0);  // A view of the mapping, not a copy.
  EXPECT_EQ(block, x.middleRows(10, 5));
  EXPECT_EQ(ReadAllBlocks(*source, 33), x);
  EXPECT_EQ(*ReadNpy(path), x);
  std::remove(path.c_str());
}

// A version 1.0 file of float32 values (header padded to 64 bytes).
std::string Float32Npy(const std::vector<float>& values, int rows, int cols) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                     std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return out;
}

TEST(NpyRowSourceTest, ConvertsFloat32BlocksExactly) {
  const std::string path = TempPath("f4.npy");
  const std::vector<float> values = {0.1f, -2.5f, 3e30f, 1e-30f, 7.0f, 0.0f};
  test_support::WriteBytes(path, Float32Npy(values, 3, 2));
  const std::unique_ptr<RowSource> source = OpenRowSource(path).value();
  const DataMatrix all = ReadAllBlocks(*source, 2);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(all.data()[i], static_cast<double>(values[i]));
  std::remove(path.c_str());
}

TEST(NpyRowSourceTest, RejectsNonFiniteValuesNamingRowAndColumn) {
  const std::string path = TempPath("nan.npy");
  test_support::WriteBytes(
      path, Float32Npy({1, 2, 3, std::numeric_limits<float>::infinity()}, 2, 2));
  const StatusOr<std::unique_ptr<RowSource>> source = OpenNpyRowSource(path);
  EXPECT_EQ(source.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(source.status().message().find("row 2, column 2"), std::string::npos)
      << source.status().message();
  EXPECT_EQ(OpenNpyRowSource(TempPath("missing.npy")).status().code(), StatusCode::kNotFound);
  std::remove(path.c_str());
}

TEST(OpenRowSourceTest, ReadsCsvIntoMemory) {
  const std::string path = TempPath("x.csv");
  const DataMatrix x = Sequence(5, 2);
  ASSERT_TRUE(WriteMatrix(path, x).ok());
  const std::unique_ptr<RowSource> source = OpenRowSource(path).value();
  EXPECT_EQ(ReadAllBlocks(*source, 2), *ReadCsv(path));
  EXPECT_EQ(OpenRowSource(TempPath("x.txt")).status().code(), StatusCode::kInvalidArgument);
  std::remove(path.c_str());
}

// The definition of the domain map, checked row by row: inside the ball
// (x - c) / R exactly; outside, the direction of x - c with norm 1 (never
// above by any way of computing it).
TEST(UnitBallRowSourceTest, MapsEachBlockAsTheDomainDefines) {
  DataMatrix x(6, 3);
  x << 1, 2, 2,            // norm 3 from the origin: inside R = 4 after centring
      0, 0, 0,             //
      10, 0, 0,            // outside
      3, 4, 0,             // exactly on the sphere of radius 5 around 0
      -1e308, 1e308, 0,    // x - c overflows for c = (1e308, ...)
      0.5, -0.25, 0.125;
  DataDomain domain;
  domain.data_norm = 4.0;
  domain.center = Eigen::Vector3d(1e-3, -2e-3, 0);
  const MatrixRowSource raw = *MatrixRowSource::Borrow(x);
  const UnitBallRowSource unit = *UnitBallRowSource::Create(raw, domain);
  const DataMatrix u = ReadAllBlocks(unit, 4);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const Eigen::RowVectorXd v = x.row(i) - domain.center.transpose();
    EXPECT_LE(u.row(i).squaredNorm(), 1.0);
    EXPECT_LE(u.row(i).stableNorm(), 1.0);
    if (v.norm() < 0.999 * domain.data_norm) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(u(i, j), v(j) / domain.data_norm);
    } else {
      EXPECT_NEAR(u.row(i).norm(), 1.0, 1e-15);
      const Eigen::RowVectorXd direction = (v / v.cwiseAbs().maxCoeff()).normalized();
      EXPECT_NEAR(u.row(i).dot(direction), 1.0, 1e-12) << i;
    }
  }
  EXPECT_EQ(u, *MapToUnitBall(x, domain, nullptr));
  DataDomain far = domain;
  far.center = Eigen::Vector3d(1e308, 0, 0);
  const DataMatrix w = ReadAllBlocks(*UnitBallRowSource::Create(raw, far), 6);
  EXPECT_TRUE(w.allFinite());
  EXPECT_NEAR(w.row(4).norm(), 1.0, 1e-15);
}

TEST(UnitBallRowSourceTest, RejectsABadDomain) {
  const DataMatrix x = Sequence(3, 2);
  const MatrixRowSource raw = *MatrixRowSource::Borrow(x);
  DataDomain domain;
  EXPECT_FALSE(UnitBallRowSource::Create(raw, domain).ok());  // R not set.
  domain.data_norm = 1;
  domain.center = Eigen::Vector3d::Zero();
  EXPECT_FALSE(UnitBallRowSource::Create(raw, domain).ok());  // Wrong centre size.
}

}  // namespace
}  // namespace dpem
