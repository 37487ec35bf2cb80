#include "train/loop/resume_position.h"

#include <algorithm>
#include <limits>

#include "distributed/worker_launcher.h"
#include "train/base/run_errors.h"

namespace sinter::train {

namespace {

// The whole number `object[key]` holds, in [lo, hi]; else an InputError naming the file and field.
long long wholeNumber(const nlohmann::json& object, const std::string& key, long long lo, long long hi, const std::string& file,
                      const std::string& field, const std::string& why) {
  const auto it = object.find(key);
  if (it == object.end()) throw InputError("resume: " + file + " has no " + field + " (" + why + ")");
  bool whole = false;  // JSON keeps non-negative whole numbers unsigned, negative ones signed
  if (it->is_number_unsigned()) whole = it->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) && it->get<long long>() >= lo;
  else if (it->is_number_integer()) whole = it->get<long long>() >= lo && it->get<long long>() <= hi;
  if (!whole) throw InputError("resume: " + file + ": " + field + " is " + it->dump() + "; " + why);
  return it->get<long long>();
}

std::string range(long long lo, long long hi) { return "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi); }

}  // namespace

void checkResumeProgress(const nlohmann::json& progress, const EpochLayout& now, long long maxTrainSteps, bool stepReplaced,
                         const std::string& file) {
  constexpr long long kLarge = std::numeric_limits<long long>::max() / 4;
  const long long stepLimit = stepReplaced ? kLarge : maxTrainSteps;
  const long long step = wholeNumber(progress, "global_step", 0, stepLimit, file, "global_step",
                                     stepReplaced ? "a step count is " + range(0, kLarge)
                                                  : "this run resumes a step from 0 to its max_train_steps (" + std::to_string(maxTrainSteps) + ")");
  const auto data = progress.find("data");
  if (data == progress.end() || !data->is_object()) throw InputError("resume: " + file + " has no data position (\"data\": {...})");
  if (const auto seed = data->find("seed"); seed == data->end() || !seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<long long>() < 0))
    throw InputError("resume: " + file + ": data.seed is " + (seed == data->end() ? std::string("missing") : seed->dump()) +
                     "; a data order's seed is a whole number from 0 to 2^64 - 1");
  // Every epoch of a run takes at least one step.
  wholeNumber(*data, "epoch", 0, step, file, "data.epoch", "an epoch from 0 to the state's global_step (" + std::to_string(step) + ")");
  EpochLayout saved = now;
  if (data->contains("ranks"))
    saved.ranks = static_cast<int>(wholeNumber(*data, "ranks", 1, distributed::kMaxWorkers, file, "data.ranks",
                                               "the processes that saved it, " + range(1, distributed::kMaxWorkers)));
  if (data->contains("train_batch_size"))
    saved.trainBatchSize = wholeNumber(*data, "train_batch_size", 1, kLarge, file, "data.train_batch_size", "a batch size is at least 1");
  if (data->contains("batches_per_epoch"))
    saved.allBatchesPerEpoch = wholeNumber(*data, "batches_per_epoch", 1, kLarge, file, "data.batches_per_epoch", "an epoch has at least one batch");
  // The index counts the state's batches; where its batches are cut as this run cuts them, it is
  // taken as it is, so it must be below this run's count too.
  const bool sameCut = saved.ranks == now.ranks && saved.trainBatchSize == now.trainBatchSize &&
                       saved.batchesPerRank() == now.batchesPerRank();
  const long long batches = saved.batchesPerRank();
  wholeNumber(*data, "index", 0, batches - 1, file, "data.index",
              "the batches already trained of an epoch of " + std::to_string(batches) + (sameCut ? " (this run's)" : " (as the state cut it)") +
                  " are " + range(0, batches - 1));
}

nlohmann::json dataPositionJson(const data::DataOrderState& position, const EpochLayout& layout) {
  return {{"seed", position.seed},
          {"epoch", position.epoch},
          {"index", position.indexInEpoch},
          {"ranks", layout.ranks},
          {"train_batch_size", layout.trainBatchSize},
          {"batches_per_epoch", layout.allBatchesPerEpoch}};
}

ResumedDataPosition resumeDataPosition(const nlohmann::json& data, const EpochLayout& now, const std::string& stateFolder) {
  ResumedDataPosition r;
  r.position = data::DataOrderState{data.at("seed").get<std::uint64_t>(), data.at("epoch").get<long long>(), data.at("index").get<long long>()};
  const long long index = r.position.indexInEpoch;
  const int savedRanks = data.value("ranks", 1);
  const long long savedBatchSize = data.value("train_batch_size", now.trainBatchSize);
  if (savedBatchSize != now.trainBatchSize) {
    EpochLayout saved{savedRanks, savedBatchSize, data.value("batches_per_epoch", now.allBatchesPerEpoch)};
    const long long savedPerRank = std::max(1LL, saved.batchesPerRank());
    r.position.indexInEpoch = std::min(now.batchesPerRank(), index * now.batchesPerRank() / savedPerRank);
    const std::string ranks = savedRanks == now.ranks ? "" : ", saved by " + std::to_string(savedRanks) + " rank" +
                                                             (savedRanks == 1 ? "" : "s") + " and continuing on " + std::to_string(now.ranks);
    r.warnings.push_back("resume: " + stateFolder + " was saved with train_batch_size " + std::to_string(savedBatchSize) +
                         " and continues with " + std::to_string(now.trainBatchSize) + ranks + ": an epoch is now " +
                         std::to_string(now.batchesPerRank()) + " batches" + (now.ranks > 1 || savedRanks > 1 ? " per rank" : "") + " (was " +
                         std::to_string(savedPerRank) + "), and it goes on from batch " + std::to_string(r.position.indexInEpoch) +
                         " (was " + std::to_string(index) + "), the same share of the epoch; its remaining batches are cut anew, so "
                         "some images of this epoch may be seen twice or not at all; the step count and schedule are this run's");
  } else if (const long long savedBatches = data.value("batches_per_epoch", now.allBatchesPerEpoch);
             savedRanks == now.ranks && savedBatches != now.allBatchesPerEpoch) {
    // The same batches, another number of them: the dataset changed (its repeats, its images).
    const long long savedPerRank = std::max(1LL, EpochLayout{savedRanks, savedBatchSize, savedBatches}.batchesPerRank());
    r.position.indexInEpoch = std::min(now.batchesPerRank(), index * now.batchesPerRank() / savedPerRank);
    r.warnings.push_back("resume: " + stateFolder + " was saved with an epoch of " + std::to_string(savedPerRank) + " batches" +
                         (now.ranks > 1 ? " per rank" : "") + " and this run's has " + std::to_string(now.batchesPerRank()) +
                         " (the dataset's repeats or images changed): it goes on from batch " + std::to_string(r.position.indexInEpoch) +
                         " (was " + std::to_string(index) + "), the same share of the epoch, in this dataset's order; the step count "
                         "and schedule are this run's");
  } else if (savedRanks != now.ranks) {
    r.position.indexInEpoch = std::min(now.batchesPerRank(), index * savedRanks / now.ranks);
    r.warnings.push_back("resume: " + stateFolder + " was saved by " + std::to_string(savedRanks) + " rank" + (savedRanks == 1 ? "" : "s") +
                         " and continues on " + std::to_string(now.ranks) + ": the epoch goes on from batch " +
                         std::to_string(r.position.indexInEpoch) + " of " + std::to_string(now.batchesPerRank()) + " per rank (was " +
                         std::to_string(index) + " of " + std::to_string((now.allBatchesPerEpoch + savedRanks - 1) / savedRanks) +
                         "); the step count and schedule are this run's");
  }
  return r;
}

}  // namespace sinter::train
