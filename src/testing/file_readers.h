// Test support for the tests of the data readers (ReadCsv, ReadNpy): read a
// scratch file of given bytes, and the shape every refusal of a file has.
// Not part of the library.
#ifndef DPEM_TESTING_FILE_READERS_H_
#define DPEM_TESTING_FILE_READERS_H_

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "dpem/status.h"
#include "testing/temp_files.h"

namespace dpem::test_support {

// reader(path) (e.g. ReadCsv) of a file `path` holding `bytes`; the file is
// removed after.
template <typename Reader>
auto ReadFileOf(const std::string& path, const std::string& bytes, Reader reader) {
  WriteBytes(path, bytes);
  auto result = reader(path);
  std::remove(path.c_str());
  return result;
}

// The message of reader(path) refusing a file `path` of `bytes` (removed
// after), expected to be InvalidArgument in one line naming the file; ""
// (and a failure) if the file is read.
template <typename Reader>
std::string RefusalOf(const std::string& path, const std::string& bytes, Reader reader) {
  const auto result = ReadFileOf(path, bytes, reader);
  EXPECT_FALSE(result.ok()) << path << " was read";
  if (result.ok()) return "";
  const std::string message(result.status().message());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_FILE_READERS_H_
