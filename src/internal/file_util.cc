#include "internal/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace dpem::internal {
namespace {

std::string ErrnoText(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// Reads from `fd` until end of file, appending to `out`.
Status ReadAll(const std::string& path, int fd, std::size_t size_hint,
               std::string* out) {
  std::size_t used = 0;
  out->resize(size_hint + 1);  // +1: the read that sees end of file.
  while (true) {
    if (used == out->size()) out->resize(out->size() * 2 + 65536);
    const ssize_t n = ::read(fd, out->data() + used, out->size() - used);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path + ": cannot read: " + ErrnoText(errno));
    }
    used += static_cast<std::size_t>(n);
  }
  out->resize(used);
  return OkStatus();
}

// A descriptor open for reading and the size of the file at open time.
struct RegularFile {
  int fd = -1;
  std::size_t size = 0;
};

// Opens `path` read-only and refuses anything but a regular file (a
// directory, a FIFO, a device such as /dev/zero, a socket). O_NONBLOCK makes
// opening a FIFO with no writer return at once instead of blocking; it has
// no effect on reading a regular file.
StatusOr<RegularFile> OpenRegularFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFoundError(path + ": no such file");
    return IoError(path + ": cannot open: " + ErrnoText(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError(path + ": not a regular file");
  }
  return RegularFile{fd, static_cast<std::size_t>(st.st_size)};
}

}  // namespace

StatusOr<std::string> ReadFileToString(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const RegularFile file, OpenRegularFile(path));
  std::string content;
  const Status status = ReadAll(path, file.fd, file.size, &content);
  ::close(file.fd);
  if (!status.ok()) return status;
  return content;
}

StatusOr<MappedFile> MappedFile::Open(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const RegularFile file, OpenRegularFile(path));
  const int fd = file.fd;
  const std::size_t size = file.size;
  if (size == 0) {
    ::close(fd);
    return MappedFile(nullptr, 0);
  }
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // The mapping keeps the file alive.
  if (address == MAP_FAILED) return IoError(path + ": cannot map: " + ErrnoText(err));
  ::madvise(address, size, MADV_SEQUENTIAL);
  return MappedFile(address, size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : address_(other.address_), size_(other.size_) {
  other.address_ = nullptr;
  other.size_ = 0;
}

MappedFile::~MappedFile() {
  if (address_ != nullptr) ::munmap(address_, size_);
}

StatusOr<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    return IoError(path + ": cannot create file for writing: " +
                   ErrnoText(errno));
  }
  return AtomicFileWriter(path, std::move(tmp), fd);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_path_(std::move(other.tmp_path_)),
      fd_(other.fd_) {
  other.fd_ = -1;
  other.tmp_path_.clear();
}

AtomicFileWriter::~AtomicFileWriter() { Abandon(); }

void AtomicFileWriter::Abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_path_.empty()) ::unlink(tmp_path_.c_str());
  tmp_path_.clear();
}

Status AtomicFileWriter::Append(std::string_view bytes) {
  if (fd_ < 0) return InternalError(path_ + ": write after commit or error");
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const Status error = IoError(path_ + ": write failed: " + ErrnoText(errno));
      Abandon();
      return error;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return OkStatus();
}

Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return InternalError(path_ + ": commit after commit or error");
  Status error;
  if (::fsync(fd_) != 0) {
    error = IoError(path_ + ": fsync failed: " + ErrnoText(errno));
  }
  const int close_result = ::close(fd_);
  fd_ = -1;
  if (error.ok() && close_result != 0) {
    error = IoError(path_ + ": close failed: " + ErrnoText(errno));
  }
  if (error.ok() && ::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    error = IoError(path_ + ": cannot rename temporary file into place: " +
                    ErrnoText(errno));
  }
  if (!error.ok()) {
    Abandon();
    return error;
  }
  tmp_path_.clear();
  return OkStatus();
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  DPEM_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Create(path));
  DPEM_RETURN_IF_ERROR(file.Append(content));
  return file.Commit();
}

Status CheckCanCreate(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return IoError(path + ": is a directory");
  }
  DPEM_ASSIGN_OR_RETURN(AtomicFileWriter probe, AtomicFileWriter::Create(path));
  return OkStatus();  // The destructor removes the temporary.
}

}  // namespace dpem::internal
