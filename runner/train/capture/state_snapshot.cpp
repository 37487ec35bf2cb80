#include "train/capture/state_snapshot.h"

#include <algorithm>
#include <map>
#include <utility>
#include <string>

#include "train/base/device_info.h"
#include "train/base/train_state.h"

namespace sinter::train {

namespace {

torch::Tensor falseOn(const torch::Tensor& t) { return torch::zeros({}, t.options().dtype(torch::kBool)); }

// Whether any bit of `t` is set (0-dim bool on its device): bitwise, so that a negative zero is no
// zero (zero_() writes +0). A dtype without an integer view of its size counts as set (copied).
torch::Tensor anyBitSet(const torch::Tensor& t) {
  if (t.numel() == 0) return falseOn(t);
  if (t.scalar_type() == torch::kBool) return t.any();
  switch (t.element_size()) {
    case 1: return t.view(torch::kUInt8).ne(0).any();
    case 2: return t.view(torch::kInt16).ne(0).any();
    case 4: return t.view(torch::kInt32).ne(0).any();
    case 8: return t.view(torch::kInt64).ne(0).any();
    default: return torch::ones({}, t.options().dtype(torch::kBool));
  }
}

// Where `t` holds a negative zero, elementwise: what a step by +-0 turns into +0 (-0 - -0 is +0).
torch::Tensor negativeZeroAt(const torch::Tensor& t) { return torch::logical_and(t == 0, torch::signbit(t)); }

// Whether `t` holds a negative zero, and whether a non-finite value (inf * 0 is NaN, a NaN's payload
// may change), as 0-dim bools on its device.
std::pair<torch::Tensor, torch::Tensor> valuesAZeroStepChanges(const torch::Tensor& t) {
  if (t.numel() == 0 || !t.is_floating_point()) return {falseOn(t), falseOn(t)};
  return {negativeZeroAt(t).any(), torch::isfinite(t).logical_not().any()};
}

torch::Tensor bitWeights(const torch::Device& device) {
  return torch::tensor({1, 2, 4, 8, 16, 32, 64, 128}, torch::TensorOptions(torch::kUInt8).device(device));
}

// `where` (bool) packed eight elements a byte, in order: 1/32 of a float32 tensor's size.
torch::Tensor packBits(const torch::Tensor& where) {
  torch::Tensor flat = where.reshape({-1}).to(torch::kUInt8);
  const int64_t padded = (flat.numel() + 7) / 8 * 8;
  if (padded != flat.numel()) flat = torch::constant_pad_nd(flat, {0, padded - flat.numel()});
  return flat.view({-1, 8}).mul(bitWeights(flat.device())).sum(1, /*keepdim=*/false, torch::kUInt8);
}

// packBits undone, shaped as `like`.
torch::Tensor unpackBits(const torch::Tensor& packed, const torch::Tensor& like) {
  const torch::Tensor bits = packed.unsqueeze(1).bitwise_and(bitWeights(packed.device())).ne(0);
  return bits.reshape({-1}).narrow(0, 0, like.numel()).view(like.sizes());
}

// The 0-dim bool flags' values: one host read per device for the whole list.
std::vector<bool> readFlags(const std::vector<torch::Tensor>& flags) {
  std::map<std::string, std::vector<size_t>> byDevice;
  for (size_t i = 0; i < flags.size(); ++i) byDevice[flags[i].device().str()].push_back(i);
  std::vector<bool> values(flags.size());
  for (const auto& [device, indices] : byDevice) {
    std::vector<torch::Tensor> here;
    for (size_t i : indices) here.push_back(flags[i]);
    const torch::Tensor read = torch::stack(here).cpu();
    const bool* data = read.data_ptr<bool>();
    for (size_t k = 0; k < indices.size(); ++k) values[indices[k]] = data[k];
  }
  return values;
}

}  // namespace

int64_t StateSnapshot::stepReserve(const torch::Device& device) {
  constexpr int64_t kGiB = 1LL << 30;
  return std::max<int64_t>(8 * kGiB, totalDeviceBytes(device) * 15 / 100);
}

StateSnapshot::StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators, std::function<void()> reset,
                             int64_t deviceReserve, std::vector<torch::Tensor> unchanged)
    : generators_(std::move(generators)), reset_(std::move(reset)) {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> flags;
  for (const torch::Tensor& t : tensors) flags.push_back(anyBitSet(t.detach()));
  for (const torch::Tensor& t : unchanged) {
    auto [negativeZero, nonFinite] = valuesAZeroStepChanges(t.detach());
    flags.push_back(negativeZero);
    flags.push_back(nonFinite);
  }
  const std::vector<bool> flagged = readFlags(flags);

  // The tensors to copy: those with a bit set, and unchanged ones holding a non-finite value.
  std::vector<torch::Tensor> copied;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const torch::Tensor live = tensors[i].detach();
    if (flagged[i]) {
      copied.push_back(live);
    } else {
      zeroed_.push_back(live);
      bytesZeroed_ += static_cast<int64_t>(live.nbytes());
    }
  }
  for (size_t i = 0; i < unchanged.size(); ++i) {
    const torch::Tensor live = unchanged[i].detach();
    const bool negativeZero = flagged[tensors.size() + 2 * i], nonFinite = flagged[tensors.size() + 2 * i + 1];
    if (nonFinite) {
      copied.push_back(live);
      continue;
    }
    bytesLeftUnchanged_ += static_cast<int64_t>(live.nbytes());
    if (negativeZero) {
      negativeZeros_.push_back({live, packBits(negativeZeroAt(live))});
      bytesSignMasks_ += static_cast<int64_t>(negativeZeros_.back().mask.nbytes());
    }
  }

  int64_t deviceRoom = 0;
  for (const torch::Tensor& t : copied)
    if (t.is_cuda()) {
      deviceRoom = std::max<int64_t>(0, availableDeviceBytes(t.device()) - deviceReserve);
      break;
    }
  for (const torch::Tensor& live : copied) {
    const int64_t size = static_cast<int64_t>(live.nbytes());
    bytes_ += size;
    if (live.is_cuda() && bytesOnDevice_ + size <= deviceRoom) {
      saved_.push_back(live.clone());
      bytesOnDevice_ += size;
    } else {
      saved_.push_back(live.to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
    }
    live_.push_back(live);
  }
  for (const at::Generator& g : generators_) generatorStates_.push_back(generatorState(g));
}

void StateSnapshot::restore() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < live_.size(); ++i) live_[i].copy_(saved_[i]);
  for (torch::Tensor& t : zeroed_) t.zero_();
  for (NegativeZeros& z : negativeZeros_) z.live.masked_fill_(unpackBits(z.mask, z.live), -0.0);
  if (reset_) reset_();
  for (size_t i = 0; i < generators_.size(); ++i) setGeneratorState(generators_[i], generatorStates_[i]);
}

}  // namespace sinter::train
