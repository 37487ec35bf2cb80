#include "train/loop/rank_noise_states.h"

#include <cstring>
#include <vector>

#include "train/base/run_errors.h"

namespace sinter::train {

namespace {

std::string keyOf(int rank) { return rank == 0 ? "device" : "device_rank" + std::to_string(rank); }

}  // namespace

void gatherNoiseStates(distributed::ProcessGroup& group, const torch::Tensor& mine, long long saveIndex, NamedTensors& rng) {
  const torch::Tensor bytes = mine.contiguous().to(torch::kUInt8);
  const std::vector<std::string> all = group.gatherOnRankZero(
      "rng/" + std::to_string(saveIndex), std::string(static_cast<const char*>(bytes.data_ptr()), static_cast<size_t>(bytes.numel())));
  for (size_t r = 1; r < all.size(); ++r) {
    torch::Tensor t = torch::empty({static_cast<int64_t>(all[r].size())}, torch::kUInt8);
    std::memcpy(t.data_ptr(), all[r].data(), all[r].size());
    rng.emplace_back(keyOf(static_cast<int>(r)), t);
  }
}

std::optional<torch::Tensor> savedNoiseState(const NamedTensors& rng, int rank) {
  for (const auto& [key, tensor] : rng)
    if (key == keyOf(rank)) return tensor;
  return std::nullopt;
}

void restoreNoiseState(at::Generator& generator, const torch::Tensor& saved, const std::string& file, int rank) {
  const torch::Tensor own = generatorState(generator);
  if (saved.scalar_type() != torch::kUInt8 || saved.sizes() != own.sizes())
    throw InputError("resume: " + file + ": " + keyOf(rank) + " is " + std::string(c10::toString(saved.scalar_type())) + " " +
                     c10::str(saved.sizes()) + "; this run's noise generator (" + generator.device().str() + ") has a state of " +
                     std::string(c10::toString(own.scalar_type())) + " " + c10::str(own.sizes()) + " (a state saved on another kind of device?)");
  try {
    setGeneratorState(generator, saved);
  } catch (const std::exception& e) {
    throw InputError("resume: " + file + ": " + keyOf(rank) + " is not a state of this run's noise generator: " + userMessage(e));
  }
}

}  // namespace sinter::train
