#include "core/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace sinter {

namespace {
std::string systemError(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

std::string parentDir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
}  // namespace

void writeFileAtomically(const std::string& path, const std::string& bytes) {
  std::random_device rd;
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(systemError("cannot write", path));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string msg = systemError("cannot write", path);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(msg);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string msg = systemError("cannot flush", path);
    ::unlink(tmp.c_str());
    throw std::runtime_error(msg);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string msg = systemError("cannot replace", path);
    ::unlink(tmp.c_str());
    throw std::runtime_error(msg);
  }
  // Make the rename itself durable.
  int dirFd = ::open(parentDir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

std::string readWholeFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(systemError("cannot read", path));
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot read '" + path + "': it is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(systemError("cannot open", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sinter
