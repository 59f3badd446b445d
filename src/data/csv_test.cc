#include "dpem/data/csv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dpem/data/io.h"
#include "testing/file_readers.h"
#include "testing/temp_files.h"

namespace dpem {
namespace {

using test_support::ReadBytes;
using test_support::WriteBytes;

std::string TempPath(const std::string& name) {
  return test_support::ProcessTempPath("dpem_csv_test_", name);
}

// ReadCsv of a file `name` holding `text` (the file removed after).
StatusOr<DataMatrix> ReadCsvText(const std::string& name, const std::string& text) {
  return test_support::ReadFileOf(TempPath(name), text, ReadCsv);
}

// Random finite doubles over the whole range (random bit patterns), plus
// special values, for bit-exact round trips.
DataMatrix RandomMatrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  DataMatrix x(rows, cols);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    double v;
    do {
      v = (i % 2 == 0) ? std::bit_cast<double>(rng()) : normal(rng);
    } while (!std::isfinite(v));
    x.data()[i] = v;
  }
  return x;
}

void ExpectBitIdentical(const DataMatrix& a, const DataMatrix& b) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.cols(), b.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(a(i, j)),
                std::bit_cast<std::uint64_t>(b(i, j)))
          << "at (" << i << ", " << j << "): " << a(i, j) << " vs " << b(i, j);
    }
  }
}

TEST(CsvTest, RoundTripIsBitExact) {
  DataMatrix x = RandomMatrix(60, 7, 12345);
  const double lim_max = std::numeric_limits<double>::max();
  const double specials[] = {0.0, -0.0, std::numeric_limits<double>::denorm_min(),
                             -std::numeric_limits<double>::min(), lim_max, -lim_max,
                             0.1, 1.0 / 3.0, 1e-300};
  for (int k = 0; k < 9; ++k) x(0, 0) = specials[k], x(1 + k / 7, k % 7) = specials[k];
  const std::string path = TempPath("roundtrip.csv");
  ASSERT_TRUE(WriteCsv(path, x).ok());
  StatusOr<DataMatrix> y = ReadCsv(path);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectBitIdentical(x, *y);
  std::remove(path.c_str());
}

TEST(CsvTest, WrittenTextParsesWithStrtod) {
  // An independent reader (strtod, C locale) gives back the exact values.
  const DataMatrix x = RandomMatrix(20, 3, 777);
  const std::string path = TempPath("strtod.csv");
  ASSERT_TRUE(WriteCsv(path, x).ok());
  std::istringstream text(ReadBytes(path));
  std::string line;
  Eigen::Index row = 0;
  while (std::getline(text, line)) {
    std::istringstream fields(line);
    std::string field;
    Eigen::Index col = 0;
    while (std::getline(fields, field, ',')) {
      ASSERT_LT(col, x.cols());
      EXPECT_EQ(std::bit_cast<std::uint64_t>(std::strtod(field.c_str(), nullptr)),
                std::bit_cast<std::uint64_t>(x(row, col)));
      ++col;
    }
    EXPECT_EQ(col, x.cols());
    ++row;
  }
  EXPECT_EQ(row, x.rows());
  std::remove(path.c_str());
}

TEST(CsvTest, HeaderCrlfSpacesAndTrailingBlankLines) {
  StatusOr<DataMatrix> y = ReadCsvText(
      "header.csv", "\xEF\xBB\xBF x , \"y\"\r\n 1.5 , -2\r\n3e2,\t+4\r\n-0.25,1e-3\r\n\r\n  \n");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->rows(), 3);
  ASSERT_EQ(y->cols(), 2);
  EXPECT_EQ((*y)(0, 0), 1.5);
  EXPECT_EQ((*y)(0, 1), -2.0);
  EXPECT_EQ((*y)(1, 0), 300.0);
  EXPECT_EQ((*y)(1, 1), 4.0);
  EXPECT_EQ((*y)(2, 0), -0.25);
  EXPECT_EQ((*y)(2, 1), 0.001);
}

TEST(CsvTest, NoHeaderNoFinalNewlineSingleColumn) {
  StatusOr<DataMatrix> y = ReadCsvText("single.csv", "7\n-8\n9.5");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->rows(), 3);
  ASSERT_EQ(y->cols(), 1);
  EXPECT_EQ((*y)(2, 0), 9.5);
}

TEST(CsvTest, UnderflowBecomesSignedZero) {
  StatusOr<DataMatrix> y =
      ReadCsvText("underflow.csv", "1e-400,-1e-400,0.0000000000000000000001e-310\n");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)(0, 0), 0.0);
  EXPECT_FALSE(std::signbit((*y)(0, 0)));
  EXPECT_EQ((*y)(0, 1), 0.0);
  EXPECT_TRUE(std::signbit((*y)(0, 1)));
  EXPECT_EQ((*y)(0, 2), 0.0);
}

struct BadCsv {
  const char* name;
  std::string content;
  std::string location;  // ":line:column:" expected in the message.
};

class CsvErrorTest : public ::testing::TestWithParam<BadCsv> {};

TEST_P(CsvErrorTest, RejectedWithLineAndColumn) {
  const BadCsv& c = GetParam();
  const std::string path = TempPath(std::string(c.name) + ".csv");
  const std::string message = test_support::RefusalOf(path, c.content, ReadCsv);
  EXPECT_NE(message.find(path + c.location), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    AllErrors, CsvErrorTest,
    ::testing::Values(
        BadCsv{"empty", "", ":1:1:"},
        BadCsv{"header_only", "a,b\r\n", ":2:1:"},
        BadCsv{"blank_only", "\n \n", ":3:1:"},
        BadCsv{"too_many", "1,2\n3,4,5\n", ":2:5:"},
        BadCsv{"too_few", "1,2,3\n4,5\n", ":2:4:"},
        BadCsv{"not_number", "1,2\n3,abc\n", ":2:3:"},
        BadCsv{"trailing_garbage", "1,2\n1.5x,2\n", ":2:1:"},
        BadCsv{"mixed_header", "a,1\n2,3\n", ":1:1:"},
        BadCsv{"hex", "1,0x10\n", ":1:3:"},
        BadCsv{"empty_field", "1,,2\n", ":1:3:"},
        BadCsv{"nan", "1,2\n3, nan\n", ":2:4:"},
        BadCsv{"inf", "1,2\n-inf,2\n", ":2:1:"},
        BadCsv{"infinity", "1,2\nInfinity,2\n", ":2:1:"},
        BadCsv{"overflow", "1,2\n1e999,2\n", ":2:1:"},
        BadCsv{"nul", std::string("1,2\n3,\0\n", 8), ":2:3:"},
        BadCsv{"blank_inside", "1,2\n\n3,4\n", ":2:1:"}),
    [](const ::testing::TestParamInfo<BadCsv>& info) { return info.param.name; });

TEST(CsvTest, MissingFileIsNotFound) {
  const std::string path = TempPath("does_not_exist.csv");
  StatusOr<DataMatrix> y = ReadCsv(path);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), StatusCode::kNotFound);
  EXPECT_NE(y.status().message().find(path), std::string::npos);
}

TEST(CsvTest, DirectoryIsIoError) {
  StatusOr<DataMatrix> y = ReadCsv(::testing::TempDir());
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), StatusCode::kIoError);
}

TEST(CsvTest, WriteToMissingDirectoryLeavesNothing) {
  const std::string dir = TempPath("no_such_dir");
  const std::string path = dir + "/out.csv";
  const Status s = WriteCsv(path, DataMatrix::Ones(2, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(CsvTest, FailedRenameRemovesTemporaryFile) {
  // The target is an existing non-empty directory: the temporary file is
  // written, the rename fails, and the temporary must be gone.
  const std::string dir = TempPath("target_is_dir.csv");
  std::filesystem::create_directory(dir);
  WriteBytes(dir + "/keep", "x");
  const Status s = WriteCsv(dir, DataMatrix::Ones(3, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_FALSE(std::filesystem::exists(dir + ".tmp." + std::to_string(::getpid())));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  std::filesystem::remove_all(dir);
}

TEST(CsvTest, OverwritesExistingFile) {
  const std::string path = TempPath("overwrite.csv");
  WriteBytes(path, "1,2,3\n4,5,6\n7,8,9\n");
  DataMatrix x(1, 2);
  x << 0.5, -1.25;
  ASSERT_TRUE(WriteCsv(path, x).ok());
  EXPECT_EQ(ReadBytes(path), "0.5,-1.25\n");
  std::remove(path.c_str());
}

TEST(CsvTest, WriteRefusesEmptyAndNonFinite) {
  const std::string path = TempPath("refused.csv");
  EXPECT_EQ(WriteCsv(path, DataMatrix(0, 3)).code(), StatusCode::kInvalidArgument);
  DataMatrix x = DataMatrix::Zero(2, 2);
  x(1, 0) = std::numeric_limits<double>::quiet_NaN();
  const Status s = WriteCsv(path, x);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("row 2, column 1"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(CsvTest, LargeFileReadsCorrectly) {
  // Text written independently with printf("%.17g"), which round-trips.
  const Eigen::Index rows = 200000, cols = 10;
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> unif(-1e6, 1e6);
  DataMatrix x(rows, cols);
  std::string text = "c0,c1,c2,c3,c4,c5,c6,c7,c8,c9\n";
  char buf[64];
  for (Eigen::Index i = 0; i < rows; ++i) {
    for (Eigen::Index j = 0; j < cols; ++j) {
      x(i, j) = unif(rng);
      std::snprintf(buf, sizeof(buf), "%s%.17g", j ? "," : "", x(i, j));
      text += buf;
    }
    text += '\n';
  }
  const std::string path = TempPath("large.csv");
  WriteBytes(path, text);
  StatusOr<DataMatrix> y = ReadCsv(path);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectBitIdentical(x, *y);
  std::remove(path.c_str());
}

TEST(IoTest, DispatchOnExtension) {
  DataMatrix x(2, 2);
  x << 1, 2, 3, 4;
  for (const std::string ext : {".csv", ".CSV", ".npy", ".Npy"}) {
    const std::string path = TempPath("dispatch" + ext);
    ASSERT_TRUE(WriteMatrix(path, x).ok()) << ext;
    const bool is_npy = ReadBytes(path).substr(0, 6) == "\x93NUMPY";
    EXPECT_EQ(is_npy, ext == ".npy" || ext == ".Npy") << ext;
    StatusOr<DataMatrix> y = ReadMatrix(path);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_EQ(*y, x);
    std::remove(path.c_str());
  }
  for (const std::string bad : {"data.txt", "data", "dir.csv/file"}) {
    StatusOr<DataMatrix> y = ReadMatrix(TempPath(bad));
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(y.status().message().find("(accepted: .csv, .npy)"), std::string::npos);
    EXPECT_EQ(WriteMatrix(TempPath(bad), x).code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace dpem
