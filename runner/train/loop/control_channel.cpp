#include "train/loop/control_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace sinter::train {

ControlChannel::ControlChannel(int fd) : fd_(fd) {
  if (::pipe2(wake_, O_CLOEXEC) != 0) throw std::runtime_error(std::string("control channel: cannot make a pipe: ") + std::strerror(errno));
  reader_ = std::thread([this] { readLines(); });
}

ControlChannel::~ControlChannel() {
  const char stop = 0;
  (void)!::write(wake_[1], &stop, 1);
  reader_.join();
  ::close(wake_[0]);
  ::close(wake_[1]);
}

std::vector<ControlLine> ControlChannel::take() {
  if (!waiting_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ControlLine> out(std::make_move_iterator(lines_.begin()), std::make_move_iterator(lines_.end()));
  lines_.clear();
  waiting_.store(false, std::memory_order_release);
  return out;
}

void ControlChannel::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  arrived_.wait_for(lock, timeout, [this] { return !lines_.empty() || closed_.load(); });
}

void ControlChannel::addLine(std::string text, long long cutBytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.push_back({++count_, std::move(text), cutBytes});
  waiting_.store(true, std::memory_order_release);
  arrived_.notify_all();
}

void ControlChannel::markClosed() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_.store(true);
  arrived_.notify_all();
}

void ControlChannel::readLines() {
  std::string line;
  long long cut = 0;
  char buffer[4096];
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) return;  // the channel is going away
    if (fds[0].revents & POLLNVAL) break;
    if (fds[0].revents == 0) continue;
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        addLine(std::move(line), cut);
        line.clear();
        cut = 0;
      } else if (line.size() < kMaxControlLineBytes) {
        line += buffer[i];
      } else {
        ++cut;
      }
    }
  }
  // The input's last line may lack its line end.
  if (!line.empty() || cut > 0) addLine(std::move(line), cut);
  markClosed();
}

}  // namespace sinter::train
