#include "train/loop/micro_batch_joining.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "data/joined_batch.h"

namespace sinter::train {

std::string batchSignatureLabel(long long batchSize, const data::Resolution& bucket) {
  return std::to_string(batchSize) + "x" + data::toString(bucket);
}

std::string microBatchJoiningRefusal(const JoiningFacts& facts) {
  if (facts.microBatches <= 1) return "no accumulation";
  const char* env = std::getenv("SINTER_BATCHED_ACCUMULATION");
  if (env && std::string(env) == "0") return "SINTER_BATCHED_ACCUMULATION=0";
  if (facts.fusedBackwardPass) return "fused_backward_pass steps the parameters inside each backward pass";
  if (facts.blocksSwap) return "blocks_to_swap streams the blocks for one pass at a time";
  if (facts.loraDropout) return "LoRA dropout (network_dropout, rank_dropout, module_dropout) draws per module inside the forward pass";
  if (!facts.familyRefusal.empty()) return facts.familyRefusal;
  return "";
}

MicroBatchJoining::MicroBatchJoining(int microBatches, torch::Device device, std::string refusal, double memoryLimitBytes)
    : microBatches_(microBatches), refusal_(std::move(refusal)), memory_(device, microBatches, memoryLimitBytes) {}

std::string MicroBatchJoining::headline(int batchSize) const {
  const std::string g = std::to_string(microBatches_), b = std::to_string(batchSize);
  if (!on()) return "gradient accumulation: " + g + " micro-batches of " + b + " run one after another (" + refusal_ + ")";
  std::string line = "gradient accumulation: " + g + " micro-batches of " + b + " run as one pass of " +
                     std::to_string(microBatches_ * batchSize) + " where their buckets match";
  if (memory_.measures())
    line += ", from step 2 on, where " + g + " micro-batches of the shape were measured to fit the memory";
  line += " (SINTER_BATCHED_ACCUMULATION=0 turns it off)";
  return line;
}

void MicroBatchJoining::logOnce(const std::string& kind, const std::string& message) {
  if (logged_.insert(kind).second) spdlog::info("gradient accumulation: {}", message);
}

std::optional<data::Batch> MicroBatchJoining::join(const std::vector<data::Batch>& batches, bool firstStep) {
  if (!on() || static_cast<int>(batches.size()) != microBatches_) return std::nullopt;  // an epoch's last, shorter step
  std::string why;
  std::optional<data::Batch> joined = data::joinBatches(batches, &why);
  if (!joined) {
    logOnce("shapes", "steps whose micro-batches differ run them one after another (first: " + why + ")");
    return std::nullopt;
  }
  if (firstStep && memory_.measures()) return std::nullopt;
  const std::string label = batchSignatureLabel(batches.front().lossWeights.size(0), batches.front().bucket);
  const JoinedPassMemory::Check fits = memory_.check(label);
  if (fits.verdict == JoinedPassMemory::Verdict::NotMeasured) return std::nullopt;  // this step measures it
  if (fits.verdict == JoinedPassMemory::Verdict::TooLarge) {
    logOnce("memory " + label, "micro-batches of " + label + " run one after another (measured again in each such step): " + fits.why);
    return std::nullopt;
  }
  return joined;
}

std::string MicroBatchJoining::summary() const {
  const long long all = joinedSteps_ + otherSteps_;
  return "gradient accumulation: " + std::to_string(joinedSteps_) + " of " + std::to_string(all) + (all == 1 ? " step" : " steps") +
         " ran their micro-batches as one pass";
}

}  // namespace sinter::train
