#include "train/loop/early_stop.h"

namespace sinter::train {

bool EarlyStop::passEndsRun(long long step, double loss) {
  if (!best_ || loss < *best_ - minDelta_) {
    best_ = loss;
    bestStep_ = step;
    sinceBest_ = 0;
    return false;
  }
  ++sinceBest_;
  return patience_ > 0 && sinceBest_ >= patience_;
}

}  // namespace sinter::train
