#pragma once
// Warm-up time (graph captures before and during training, an uncaptured run's first step): each
// part reported as it happens (a Warmup event and a log line), the sum kept for the run's last line.
#include <string>

#include "train/base/event_sink.h"

namespace sinter::train {

class WarmupClock {
 public:
  explicit WarmupClock(EventSink& events) : events_(events) {}
  void add(const std::string& what, double seconds);
  double total() const { return total_; }

 private:
  EventSink& events_;
  double total_ = 0;
};

}  // namespace sinter::train
