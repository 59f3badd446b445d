#include "dpem/data/npy.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "testing/file_readers.h"
#include "testing/temp_files.h"

namespace dpem {
namespace {

using std::string_literals::operator""s;

using test_support::ReadBytes;
using test_support::WriteBytes;

std::string TempPath(const std::string& name) {
  return test_support::ProcessTempPath("dpem_npy_test_", name);
}

// An .npy file per the format specification: magic, version, header length
// (2 bytes little-endian for 1.0, 4 bytes for 2.0 and 3.0), the dict padded
// with spaces and terminated by '\n' to a multiple of 64 bytes, then data.
std::string NpyFile(int major, const std::string& dict, const std::string& data) {
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const std::size_t preamble = 8 + len_bytes;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < len_bytes; ++i) {
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return out + header + data;
}

// Little-endian bytes of `values` (explicit shifts, independent of the host).
template <typename T>
std::string LittleEndian(const std::vector<T>& values) {
  std::string out;
  for (T v : values) {
    std::uint64_t bits = 0;
    if constexpr (sizeof(T) == 8) bits = std::bit_cast<std::uint64_t>(v);
    if constexpr (sizeof(T) == 4) bits = std::bit_cast<std::uint32_t>(v);
    if constexpr (sizeof(T) == 1) bits = std::bit_cast<std::uint8_t>(v);
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      out += static_cast<char>((bits >> (8 * b)) & 0xff);
    }
  }
  return out;
}

std::string Dict(const std::string& descr, const std::string& shape,
                 const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }";
}

// ReadNpy of a file `name`.npy holding `bytes` (the file removed after).
StatusOr<DataMatrix> ReadBytesAsNpy(const std::string& name, const std::string& bytes) {
  return test_support::ReadFileOf(TempPath(name + ".npy"), bytes, ReadNpy);
}

const std::vector<double> kSix = {1.5, -2.0, 0.1, 1e300, -0.0, 4.9e-324};

TEST(NpyTest, ReadsFloat64) {
  StatusOr<DataMatrix> x =
      ReadBytesAsNpy("f8", NpyFile(1, Dict("<f8", "(2, 3)"), LittleEndian(kSix)));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ(x->rows(), 2);
  ASSERT_EQ(x->cols(), 3);
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>((*x)(k / 3, k % 3)),
              std::bit_cast<std::uint64_t>(kSix[k]));
  }
}

TEST(NpyTest, ReadsFloat32AsDouble) {
  const std::vector<float> v = {0.1f, -3.25f, 1e30f, 7.0f};
  StatusOr<DataMatrix> x =
      ReadBytesAsNpy("f4", NpyFile(1, Dict("<f4", "(2, 2)"), LittleEndian(v)));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ(x->rows(), 2);
  EXPECT_EQ((*x)(0, 0), static_cast<double>(0.1f));
  EXPECT_NE((*x)(0, 0), 0.1);
  EXPECT_EQ((*x)(0, 1), -3.25);
  EXPECT_EQ((*x)(1, 0), static_cast<double>(1e30f));
  EXPECT_EQ((*x)(1, 1), 7.0);
}

TEST(NpyTest, OneDimensionalShapeIsOneColumn) {
  StatusOr<DataMatrix> x = ReadBytesAsNpy(
      "1d", NpyFile(1, Dict("<f8", "(3,)"), LittleEndian(std::vector<double>{1, 2, 3})));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ(x->rows(), 3);
  ASSERT_EQ(x->cols(), 1);
  EXPECT_EQ((*x)(2, 0), 3.0);
}

TEST(NpyTest, Versions2And3) {
  for (int major : {2, 3}) {
    StatusOr<DataMatrix> x = ReadBytesAsNpy(
        "v" + std::to_string(major),
        NpyFile(major, Dict("<f8", "(3, 2)"), LittleEndian(kSix)));
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    ASSERT_EQ(x->rows(), 3);
    EXPECT_EQ((*x)(1, 1), 1e300);
  }
}

TEST(NpyTest, HeaderSpacingKeyOrderAndQuotes) {
  const std::string dict =
      "{ \"shape\" :( 2 ,2L ) ,'fortran_order':False,\t'descr':\"<f8\"}";
  StatusOr<DataMatrix> x = ReadBytesAsNpy(
      "spacing", NpyFile(1, dict, LittleEndian(std::vector<double>{1, 2, 3, 4})));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ((*x)(1, 0), 3.0);
}

TEST(NpyTest, IntegerDtypesConvertToDouble) {
  StatusOr<DataMatrix> a = ReadBytesAsNpy(
      "u1", NpyFile(1, Dict("|u1", "(1, 3)"),
                    LittleEndian(std::vector<std::uint8_t>{0, 7, 255})));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)(0, 2), 255.0);
  const std::vector<std::int64_t> big = {-5, (std::int64_t{1} << 53) + 1};
  StatusOr<DataMatrix> b =
      ReadBytesAsNpy("i8", NpyFile(1, Dict("<i8", "(2,)"), LittleEndian(big)));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)(0, 0), -5.0);
  EXPECT_EQ((*b)(1, 0), 9007199254740992.0);  // 2^53 + 1 rounds to even.
}

struct BadNpy {
  const char* name;
  std::string bytes;
  const char* expected;  // A phrase of the message.
};

class NpyErrorTest : public ::testing::TestWithParam<BadNpy> {};

TEST_P(NpyErrorTest, Rejected) {
  const BadNpy& c = GetParam();
  const std::string message =
      test_support::RefusalOf(TempPath(std::string(c.name) + ".npy"), c.bytes, ReadNpy);
  EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  // One line of printable ASCII, whatever bytes the header held.
  for (char ch : message) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << message;
}

const std::string kFourDoubles = LittleEndian(std::vector<double>{1, 2, 3, 4});

std::string WithByte(std::string s, std::size_t i, char c) {
  s[i] = c;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    AllErrors, NpyErrorTest,
    ::testing::Values(
        BadNpy{"fortran", NpyFile(1, Dict("<f8", "(2, 2)", "True"), kFourDoubles),
               "fortran_order"},
        BadNpy{"big_endian", NpyFile(1, Dict(">f8", "(2, 2)"), kFourDoubles),
               "big-endian"},
        BadNpy{"bad_magic", WithByte(NpyFile(1, Dict("<f8", "(2, 2)"), kFourDoubles), 1, 'M'),
               "bad magic"},
        BadNpy{"empty_file", "", "bad magic"},
        BadNpy{"version4", WithByte(NpyFile(1, Dict("<f8", "(2, 2)"), kFourDoubles), 6, 4),
               "version 4.0"},
        BadNpy{"truncated_header", NpyFile(1, Dict("<f8", "(2, 2)"), "").substr(0, 40),
               "truncated header"},
        BadNpy{"truncated_data",
               NpyFile(1, Dict("<f8", "(2, 2)"), kFourDoubles.substr(0, 31)),
               "data truncated"},
        BadNpy{"trailing_data", NpyFile(1, Dict("<f8", "(2, 2)"), kFourDoubles + "x"),
               "after the data"},
        BadNpy{"complex", NpyFile(1, Dict("<c16", "(2, 1)"), kFourDoubles),
               "unsupported dtype '<c16'"},
        BadNpy{"float16", NpyFile(1, Dict("<f2", "(2, 2)"), std::string(8, '\0')),
               "unsupported dtype '<f2'"},
        BadNpy{"zero_rows", NpyFile(1, Dict("<f8", "(0, 3)"), ""), "empty array"},
        BadNpy{"zero_cols", NpyFile(1, Dict("<f8", "(3, 0)"), ""), "empty array"},
        BadNpy{"three_dims", NpyFile(1, Dict("<f8", "(1, 2, 2)"), kFourDoubles),
               "shape (1, 2, 2)"},
        BadNpy{"scalar", NpyFile(1, Dict("<f8", "()"), kFourDoubles.substr(0, 8)),
               "shape ()"},
        BadNpy{"huge_shape",
               NpyFile(1, Dict("<f8", "(4294967296, 4294967296)"), kFourDoubles),
               "too large"},
        BadNpy{"nan",
               NpyFile(1, Dict("<f8", "(2, 2)"),
                       LittleEndian(std::vector<double>{
                           1, 2, 3, std::numeric_limits<double>::quiet_NaN()})),
               "NaN value at row 2, column 2"},
        BadNpy{"inf_f4",
               NpyFile(1, Dict("<f4", "(2,)"),
                       LittleEndian(std::vector<float>{
                           -std::numeric_limits<float>::infinity(), 1.0f})),
               "infinite value at row 1, column 1"},
        BadNpy{"unclosed_dict",
               NpyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2)",
                       kFourDoubles),
               "unparsable header"},
        BadNpy{"not_a_dict", NpyFile(1, "hello", kFourDoubles), "unparsable header"},
        BadNpy{"missing_key", NpyFile(1, "{'descr': '<f8', 'shape': (2, 2)}", kFourDoubles),
               "missing key"},
        BadNpy{"extra_key",
               NpyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), "
                          "'x': 1}",
                       kFourDoubles),
               "unexpected key 'x'"},
        BadNpy{"structured",
               NpyFile(1, "{'descr': [('a', '<f8')], 'fortran_order': False, "
                          "'shape': (4,)}",
                       kFourDoubles),
               "structured"},
        // Header text is quoted: non-printable bytes become '?', at most 24
        // characters are kept (tests/hostile/data/header_key_control_bytes.npy).
        BadNpy{"key_control_bytes",
               NpyFile(1,
                       "{'descr': '<f8', 'fortran_order\x01\0\x7f\xde\x94"
                       "a\xa0\n, 'shape': (2, 2)}"s,
                       kFourDoubles),
               "after key 'fortran_order?????a??, '"},
        BadNpy{"descr_control_bytes", NpyFile(1, Dict("<f\n8\x1b[31m", "(2, 2)"), kFourDoubles),
               "unsupported dtype '<f?8?[31m'"},
        BadNpy{"long_key",
               NpyFile(1, "{'" + std::string(30, 'x') + "': 1}", kFourDoubles),
               "unexpected key 'xxxxxxxxxxxxxxxxxxxxxxxx...'"},
        BadNpy{"deep_nesting", NpyFile(1, "{'descr': " + std::string(100, '['), ""),
               "nesting too deep"}),
    [](const ::testing::TestParamInfo<BadNpy>& info) { return info.param.name; });

TEST(NpyTest, MissingFileIsNotFound) {
  StatusOr<DataMatrix> x = ReadNpy(TempPath("missing.npy"));
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().code(), StatusCode::kNotFound);
}

DataMatrix RandomMatrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  DataMatrix x(rows, cols);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    double v;
    do v = std::bit_cast<double>(rng()); while (!std::isfinite(v));
    x.data()[i] = v;
  }
  return x;
}

TEST(NpyTest, WriteProducesSpecLayout) {
  DataMatrix x(3, 2);
  x << 1, 2, 3, 4, 5, 6;
  const std::string path = TempPath("layout.npy");
  ASSERT_TRUE(WriteNpy(path, x).ok());
  const std::string bytes = ReadBytes(path);
  std::remove(path.c_str());
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t len = static_cast<unsigned char>(bytes[8]) +
                          256 * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ((10 + len) % 64, 0u);
  ASSERT_EQ(bytes.size(), 10 + len + 6 * 8);
  const std::string header = bytes.substr(10, len);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_NE(header.find("'descr': '<f8'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (3, 2)"), std::string::npos) << header;
  EXPECT_EQ(bytes.substr(10 + len),
            LittleEndian(std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(NpyTest, RoundTripIsBitExact) {
  const DataMatrix x = RandomMatrix(123, 5, 99);
  const std::string path = TempPath("roundtrip.npy");
  ASSERT_TRUE(WriteNpy(path, x).ok());
  StatusOr<DataMatrix> y = ReadNpy(path);
  std::remove(path.c_str());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->rows(), x.rows());
  ASSERT_EQ(y->cols(), x.cols());
  EXPECT_EQ(std::memcmp(y->data(), x.data(), sizeof(double) * x.size()), 0);
}

TEST(NpyTest, WriteErrors) {
  EXPECT_EQ(WriteNpy(TempPath("empty.npy"), DataMatrix(2, 0)).code(),
            StatusCode::kInvalidArgument);
  const std::string path = TempPath("no_such_dir") + "/x.npy";
  const Status s = WriteNpy(path, DataMatrix::Ones(1, 1));
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find(path), std::string::npos);
}

// Optional cross-check against NumPy itself; skipped where it is missing.
TEST(NpyTest, AgreesWithNumpyIfAvailable) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "numpy not available";
  }
  const std::string ours = TempPath("ours.npy");
  const std::string theirs = TempPath("theirs.npy");
  DataMatrix x(2, 3);
  x << 0.1, -2, 3e-300, 4, 5.5, -6;
  ASSERT_TRUE(WriteNpy(ours, x).ok());
  const std::string script =
      "/usr/bin/python3 -c \"import numpy as np, sys; a = np.load('" + ours +
      "'); assert a.shape == (2, 3) and a[0, 0] == 0.1 and a[1, 2] == -6; "
      "np.save('" + theirs + "', a.astype('<f4'))\"";
  ASSERT_EQ(std::system(script.c_str()), 0);
  StatusOr<DataMatrix> y = ReadNpy(theirs);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->rows(), 2);
  EXPECT_EQ((*y)(0, 0), static_cast<double>(0.1f));
  EXPECT_EQ((*y)(1, 2), -6.0);
  std::remove(ours.c_str());
  std::remove(theirs.c_str());
}

}  // namespace
}  // namespace dpem
