#include "train/loop/resume_position.h"

#include <algorithm>

namespace sinter::train {

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
