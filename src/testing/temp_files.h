// Test support: scratch files of a test process (GoogleTest's TempDir, named
// by the process id, as CTest runs the cases of a binary in parallel
// processes) and their bytes. Not part of the library.
#ifndef DPEM_TESTING_TEMP_FILES_H_
#define DPEM_TESTING_TEMP_FILES_H_

#include <unistd.h>

#include <fstream>
#include <ios>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace dpem::test_support {

// TempDir() + `prefix` + this process's id + "_" + `name`: a path no other
// test process uses.
inline std::string ProcessTempPath(const std::string& prefix, const std::string& name) {
  return ::testing::TempDir() + prefix + std::to_string(::getpid()) + "_" + name;
}

// Writes `bytes` to `path` (binary, truncated first); a failed write fails
// the test.
inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// The bytes of the file at `path` ("" if it cannot be read).
inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_TEMP_FILES_H_
