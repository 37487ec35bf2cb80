#include "train/loop/best_validation.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

#include "distributed/process_group.h"
#include "train/base/config_values.h"

namespace sinter::train {

namespace fs = std::filesystem;

BestValidationOptions BestValidationOptions::fromConfig(const Config& config) {
  BestValidationOptions o;
  o.keep = static_cast<int>(optionalInt(config, "save_best_k").value_or(0));
  o.patience = optionalInt(config, "early_stop_patience").value_or(0);
  o.minDelta = config.getDouble("early_stop_min_delta");
  return o;
}

std::string bestValidationRefusal(const Config& config, long long validationImages) {
  if (validationImages > 0) return {};
  const BestValidationOptions o = BestValidationOptions::fromConfig(config);
  const char* key = o.keep > 0 ? "save_best_k" : o.patience > 0 ? "early_stop_patience" : nullptr;
  if (!key) return {};
  return std::string(key) + " needs a validation loss, and validation is off: set validation_split so that images are held out "
                            "(no image is held out now)";
}

BestValidation::BestValidation(const RunContext& run, RunSaves& saves, std::string outputName, long long validationImages)
    : run_(run),
      saves_(saves),
      outputName_(std::move(outputName)),
      options_(BestValidationOptions::fromConfig(run.config)),
      schedule_(ValidationOptions::fromConfig(run.config)),
      validates_(validationImages > 0),
      best_(options_.keep),
      earlyStop_(options_.patience, options_.minDelta) {}

void BestValidation::passed(long long step, long long epoch, double loss) {
  if (options_.keep > 0) keepBest(step, epoch, loss);
  if (options_.patience <= 0) return;
  // The epoch's pass at a step that had one already sees the same weights: not a pass of its own.
  if (earlyStop_.bestLoss() && earlyStop_.bestStep() == step) return;
  patienceRanOut_ = earlyStop_.passEndsRun(step, loss);
  if (patienceRanOut_) {
    char text[256];
    std::snprintf(text, sizeof text, "no new best validation loss in %lld passes (early_stop_patience); the best is %.6f at step %lld",
                  earlyStop_.passesWithoutBest(), *earlyStop_.bestLoss(), earlyStop_.bestStep());
    stopMessage_ = text;
  }
}

void BestValidation::keepBest(long long step, long long epoch, double loss) {
  if (!best_.earns(step, loss)) return;
  const std::string path = saves_.bestModel(bestFileStem(outputName_, step, loss), step, epoch, loss);
  if (path.empty()) return;
  const std::optional<BestCheckpoint> dropped = best_.add(BestCheckpoint{step, loss, path});
  // Deleted only after the new file is whole: a crash in between leaves k + 1 best files, never fewer.
  if (dropped) {
    std::error_code ec;
    if (fs::remove(dropped->path, ec)) spdlog::info("removed {} (no longer among the {} best)", dropped->path, options_.keep);
    saves_.removeFilesBeside(dropped->path);
  }
  run_.events.emit(events::Saved{path, "best", step, loss, best_.keptPaths()});
}

bool BestValidation::endsRunAfter(const StepBoundary& boundary, bool ignore) {
  if (options_.patience <= 0 || !validates_) return false;
  const bool passesHere = schedule_.scheduledAfterStep(boundary.step) ||
                          ((boundary.epochEnds || boundary.lastStep) && schedule_.scheduledAfterEpoch(boundary.epoch));
  if (!passesHere) return false;
  bool ends = patienceRanOut_;
  if (run_.group) {
    // Rank 0 validated; the others wait here for its verdict (as they would at the next all-reduce).
    const std::string key = "early_stop/" + std::to_string(boundary.step);
    if (run_.group->rank() == 0) {
      run_.group->publish(key, ends ? "stop\n" + stopMessage_ : "go");
    } else {
      const std::string verdict = run_.group->await(key);
      ends = verdict.rfind("stop\n", 0) == 0;
      if (ends) stopMessage_ = verdict.substr(5);
    }
  }
  return ends && !ignore;
}

}  // namespace sinter::train
