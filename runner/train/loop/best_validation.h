#pragma once
// What each validation pass's loss decides (Sinter's own keys, DESIGN.md §8): save_best_k keeps the
// k files with the lowest validation loss so far (best_checkpoints.h), early_stop_patience ends the
// run after that many passes in a row without a new best (early_stop.h). Rank 0 validates, writes
// and deletes; at each boundary the schedule validates, every rank learns rank 0's verdict through
// the rendezvous store, so that all of them end at the same step.
#include <optional>
#include <string>

#include "core/config.h"
#include "train/loop/best_checkpoints.h"
#include "train/loop/early_stop.h"
#include "train/loop/run_controls.h"
#include "train/loop/run_saves.h"
#include "train/loop/validation_pass.h"

namespace sinter::train {

struct BestValidationOptions {
  int keep = 0;            // save_best_k (0: off)
  long long patience = 0;  // early_stop_patience (0: off)
  double minDelta = 0;     // early_stop_min_delta

  static BestValidationOptions fromConfig(const Config& config);
  bool any() const { return keep > 0 || patience > 0; }
};

// Why the config cannot have save_best_k or early_stop_patience (naming the key): set without a
// validation pass to decide them (no image held out by validation_split). Empty when fine.
std::string bestValidationRefusal(const Config& config, long long validationImages);

class BestValidation {
 public:
  // `validationImages`: the images held out (0: no passes, nothing to decide).
  BestValidation(const RunContext& run, RunSaves& saves, std::string outputName, long long validationImages);

  // Rank 0, after each pass: a best file when the loss earns one (written before the one that drops
  // out is deleted), its `saved` event, and the pass counted for early_stop_patience.
  void passed(long long step, long long epoch, double loss);
  // Every rank, after the boundary's passes: whether early_stop_patience ends the run here, as rank 0
  // decided. `ignore`: the run ends here anyway (a stop, stop_after_epoch, the last step).
  bool endsRunAfter(const StepBoundary& boundary, bool ignore);
  // Why it ended the run (the log and the done event say it).
  const std::string& stopMessage() const { return stopMessage_; }

 private:
  void keepBest(long long step, long long epoch, double loss);

  const RunContext& run_;
  RunSaves& saves_;
  std::string outputName_;
  BestValidationOptions options_;
  ValidationOptions schedule_;
  bool validates_;
  BestCheckpoints best_;
  EarlyStop earlyStop_;
  bool patienceRanOut_ = false;  // rank 0: the last pass was the patience-th without a new best
  std::string stopMessage_;
};

}  // namespace sinter::train
