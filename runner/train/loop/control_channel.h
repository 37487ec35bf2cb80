#pragma once
// The run's control channel (`--control stdin`): lines read from a file descriptor on a thread of
// its own, so the loop never blocks on them; at a step boundary it takes what has arrived (an
// atomic flag when nothing has). The end of the input is no command: it only ends the reading.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sinter::train {

struct ControlLine {
  long long number = 0;  // 1-based, counting every line read
  std::string text;      // without its line end; at most kMaxControlLineBytes
  long long cutBytes = 0;  // what a longer line had beyond them
};
constexpr size_t kMaxControlLineBytes = 4096;

class ControlChannel {
 public:
  // Reads `fd` (not closed here) until its end; std::runtime_error when the reader cannot start.
  explicit ControlChannel(int fd);
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  // The lines that arrived since the last call, in order.
  std::vector<ControlLine> take();
  // Returns once a line is waiting or the input has ended, or after `timeout`.
  void wait(std::chrono::milliseconds timeout);
  // The input ended (or could not be read): no more lines come. Lines read before stay to be taken.
  bool closed() const { return closed_.load(); }

 private:
  void readLines();
  void addLine(std::string text, long long cutBytes);
  void markClosed();

  int fd_;
  int wake_[2] = {-1, -1};  // the destructor's word to the reader
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<ControlLine> lines_;
  std::atomic<bool> waiting_{false};  // lines_ is not empty
  std::atomic<bool> closed_{false};
  long long count_ = 0;
  std::thread reader_;
};

}  // namespace sinter::train
