#pragma once
// early_stop_patience's count: validation passes in a row without a new best. A pass is a new best
// when its loss is below the best so far by more than early_stop_min_delta (the first pass always
// is). Pure: the loop asks after each pass whether the run ends there.
#include <optional>

namespace sinter::train {

class EarlyStop {
 public:
  EarlyStop(long long patience, double minDelta) : patience_(patience), minDelta_(minDelta) {}

  // Counts a pass's loss at `step`; true when this pass is the patience-th in a row without a new best.
  bool passEndsRun(long long step, double loss);
  long long passesWithoutBest() const { return sinceBest_; }
  long long patience() const { return patience_; }
  std::optional<double> bestLoss() const { return best_; }
  long long bestStep() const { return bestStep_; }

 private:
  long long patience_;
  double minDelta_;
  std::optional<double> best_;
  long long bestStep_ = 0;
  long long sinceBest_ = 0;
};

}  // namespace sinter::train
