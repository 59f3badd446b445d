// Shared by the fuzz targets: the fuzzer's input as a file the readers can
// open by path, without touching the disk (a memfd named by /proc/self/fd).
#ifndef DPEM_FUZZ_FUZZ_FILE_H_
#define DPEM_FUZZ_FUZZ_FILE_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace dpem::fuzzing {

// Replaces the content of this process's in-memory file with `data` and
// returns its path.
inline const std::string& AsFile(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("dpem_fuzz", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  return path;
}

}  // namespace dpem::fuzzing

#endif  // DPEM_FUZZ_FUZZ_FILE_H_
