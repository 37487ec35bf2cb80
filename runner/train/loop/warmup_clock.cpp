#include "train/loop/warmup_clock.h"

#include <spdlog/spdlog.h>

namespace sinter::train {

void WarmupClock::add(const std::string& what, double seconds) {
  total_ += seconds;
  events_.emit(events::Warmup{what, seconds});
  spdlog::info("warm-up ({}): {:.2f} s", what, seconds);
}

}  // namespace sinter::train
