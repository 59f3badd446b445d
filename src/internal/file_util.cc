#include "internal/file_util.h"

#include <fcntl.h>
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

}  // namespace

StatusOr<std::string> ReadFileToString(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFoundError(path + ": no such file");
    return IoError(path + ": cannot open: " + ErrnoText(err));
  }
  struct stat st {};
  std::size_t size_hint = 0;
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      return IoError(path + ": is a directory, not a file");
    }
    if (S_ISREG(st.st_mode)) size_hint = static_cast<std::size_t>(st.st_size);
  }
  std::string content;
  const Status status = ReadAll(path, fd, size_hint, &content);
  ::close(fd);
  if (!status.ok()) return status;
  return content;
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
