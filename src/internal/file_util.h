// File helpers shared by dpem's readers and writers. Private to the library
// (not installed).
#ifndef DPEM_INTERNAL_FILE_UTIL_H_
#define DPEM_INTERNAL_FILE_UTIL_H_

#include <string>
#include <string_view>

#include "dpem/data/matrix.h"
#include "dpem/status.h"

namespace dpem::internal {

// The whole content of `path`. NotFound if it does not exist, IoError if it
// is not a regular file (a directory, a FIFO, a device such as /dev/zero) or
// cannot be read (no permission, a read error).
StatusOr<std::string> ReadFileToString(const std::string& path);

// The base of a class that owns an operating-system resource (a mapping, a
// file descriptor): moved by construction only, the moved-from object giving
// the resource up; never copied or assigned.
class MoveOnlyResource {
 public:
  MoveOnlyResource(const MoveOnlyResource&) = delete;
  MoveOnlyResource& operator=(const MoveOnlyResource&) = delete;
  MoveOnlyResource& operator=(MoveOnlyResource&&) = delete;

 protected:
  MoveOnlyResource() = default;
  MoveOnlyResource(MoveOnlyResource&&) = default;
  ~MoveOnlyResource() = default;
};

// A regular file mapped read-only into memory (mmap), so that data larger
// than memory is paged in as it is read. Move-only; unmaps on destruction.
// Thread safety: data() may be read concurrently.
class MappedFile : private MoveOnlyResource {
 public:
  // NotFound if `path` does not exist; IoError if it cannot be opened or
  // mapped, or is not a regular file (a pipe, a directory). An empty file
  // maps to an empty view.
  static StatusOr<MappedFile> Open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  ~MappedFile();

  // The file's bytes.
  std::string_view data() const { return {static_cast<const char*>(address_), size_}; }

 private:
  MappedFile(void* address, std::size_t size) : address_(address), size_(size) {}
  void* address_ = nullptr;
  std::size_t size_ = 0;
};

// A file written under a temporary name (`path + ".tmp.<pid>"`) and renamed
// over its final name by Commit(), so readers never see a partial file and a
// failure leaves nothing at `path`. Destroying an uncommitted writer removes
// the temporary. Concurrent writers of one path in one process collide.
class AtomicFileWriter : private MoveOnlyResource {
 public:
  // Creates the temporary; IoError naming `path` if that fails (for example
  // because the directory is missing or not writable).
  static StatusOr<AtomicFileWriter> Create(const std::string& path);
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  ~AtomicFileWriter();

  // Appends `bytes`; IoError naming the final path on failure.
  Status Append(std::string_view bytes);
  // Flushes, syncs and renames the temporary over the final path. After an
  // error the temporary is removed and `path` is untouched.
  Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string tmp_path, int fd)
      : path_(std::move(path)), tmp_path_(std::move(tmp_path)), fd_(fd) {}
  void Abandon();

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
};

// Writes `content` to `path` through an AtomicFileWriter.
Status WriteFileAtomically(const std::string& path, std::string_view content);

// IoError unless a file can be created at `path` now (checked by creating
// and removing the writer's temporary). Lets commands refuse before doing
// expensive or privacy-consuming work.
Status CheckCanCreate(const std::string& path);

// Checks that `x` has at least one row and one column and only finite values;
// InvalidArgument naming `path` (1-based row and column) otherwise.
Status ValidateMatrixForWriting(const std::string& path, const DataMatrix& x);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_FILE_UTIL_H_
