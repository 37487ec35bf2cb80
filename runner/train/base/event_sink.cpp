#include "train/base/event_sink.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sinter::train {

void EventSink::emit(const events::Event& event) {
  if (!jsonl_ || muted_) return;
  const std::string line = events::toJsonLine(event) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  if (readerGone_) return;
  errno = 0;
  const bool written = std::fwrite(line.data(), 1, line.size(), stdout) == line.size();
  // The app reads events as they happen.
  if (written && std::fflush(stdout) == 0) return;
  // The reader went away (the app crashed or was killed; SIGPIPE is ignored: runner_cli.cpp): the
  // run outlives its window, so it says so once and goes on to its end and its saves.
  readerGone_ = true;
  const int error = errno;
  std::clearerr(stdout);
  spdlog::warn("the events' reader is gone (stdout: {}); events stop here, training goes on to its end and saves",
               error ? std::strerror(error) : "write failed");
}

}  // namespace sinter::train
