#include "train/loop/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace sinter::train {

namespace {

std::string errorText(int error) { return std::strerror(error); }

// What the file says (a pid), without surrounding white space.
std::string readHolder(int fd) {
  char buffer[64];
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return "";
  std::string text(buffer, static_cast<size_t>(n));
  const size_t begin = text.find_first_not_of(" \t\r\n"), end = text.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

// Whether `fd` is still the file at `path` (a holder that ended may have removed it between our
// open and our lock, and a lock on a removed file locks nothing another run would find).
bool isTheFileAt(int fd, const std::string& path) {
  struct stat mine {}, there {};
  return ::fstat(fd, &mine) == 0 && ::stat(path.c_str(), &there) == 0 && mine.st_dev == there.st_dev && mine.st_ino == there.st_ino;
}

}  // namespace

std::string outputLockPath(const std::string& outputDir, const std::string& outputName) {
  return (std::filesystem::path(outputDir) / (outputName + ".lock")).string();
}

OutputLock::OutputLock(std::string path) : path_(std::move(path)) {
  for (int attempt = 0; fd_ < 0; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create the lock file '" + path_ + "': " + errorText(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string holder = readHolder(fd);
      ::close(fd);
      if (error == EWOULDBLOCK)
        throw OutputLockHeld("'" + path_ + "' is locked by another run (" + (holder.empty() ? "pid not written yet" : "pid " + holder) + ")");
      throw std::runtime_error("cannot lock '" + path_ + "': " + errorText(error));
    }
    if (isTheFileAt(fd, path_)) {
      fd_ = fd;
    } else {
      ::close(fd);
      if (attempt >= 100) throw std::runtime_error("cannot lock '" + path_ + "': it is removed and made again as fast as it is opened");
    }
  }
  // A file with a pid in it that nobody holds was left by a run that ended without removing it.
  if (std::string previous = readHolder(fd_); !previous.empty()) takenOverFrom_ = std::move(previous);
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::unlink(path_.c_str());
    ::close(fd_);
    throw std::runtime_error("cannot write the lock file '" + path_ + "': " + errorText(error));
  }
}

OutputLock::~OutputLock() {
  // Removed while still held, so no other run can lock this file after it is gone from the folder.
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace sinter::train
