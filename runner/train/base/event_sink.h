#pragma once
// Where a run reports what happens: JSONL events on stdout (with --events jsonl, for the app) and
// human log lines on stderr through spdlog. Thread-safe. Once stdout's reader is gone (a write
// fails), the run logs that once and emits nothing more.
#include <mutex>

#include "core/events.h"

namespace sinter::train {

class EventSink {
 public:
  explicit EventSink(bool jsonlOnStdout) : jsonl_(jsonlOnStdout) {}
  void emit(const events::Event& event);
  bool jsonl() const { return jsonl_; }
  // Ranks other than 0 of a run on several processes report nothing (rank 0 speaks for all).
  void mute() { muted_ = true; }

 private:
  bool jsonl_;
  bool muted_ = false;
  bool readerGone_ = false;
  std::mutex mutex_;
};

}  // namespace sinter::train
