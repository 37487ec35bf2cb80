#include "train/base/event_sink.h"

#include <cstdio>

namespace sinter::train {

void EventSink::emit(const events::Event& event) {
  if (!jsonl_ || muted_) return;
  const std::string line = events::toJsonLine(event) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);  // the app reads events as they happen
}

}  // namespace sinter::train
