#include "train/loop/joined_pass_memory.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "train/base/device_info.h"
#include "train/base/vram_budget.h"

namespace sinter::train {

namespace {

constexpr double kBytesPerGiB = 1073741824.0;
// What the allocator's fragmentation and the step's other transient buffers may need beyond the estimate.
constexpr double kUsableMemoryShare = 0.9;

}  // namespace

JoinedPassMemory::JoinedPassMemory(torch::Device device, int microBatches, double limitBytes)
    : device_(device), microBatches_(microBatches), limitBytes_(limitBytes) {}

int64_t JoinedPassMemory::allocatedNow() const { return allocatedDeviceBytes(device_); }

void JoinedPassMemory::measured(const std::vector<std::string>& labels, int64_t allocatedBefore) {
  if (!measures()) return;
  const int64_t used = std::max<int64_t>(0, static_cast<int64_t>(deviceMemoryPeakBytes(device_)) - allocatedBefore);
  for (const std::string& label : labels) {
    auto it = perMicroBatch_.find(label);
    if (it == perMicroBatch_.end()) perMicroBatch_[label] = used;
    else it->second = std::min(it->second, used);
  }
}

JoinedPassMemory::Check JoinedPassMemory::check(const std::string& label) const {
  if (!measures()) return {};
  const auto it = perMicroBatch_.find(label);
  if (it == perMicroBatch_.end()) return {Verdict::NotMeasured, ""};
  const double total = static_cast<double>(totalDeviceBytes(device_));
  const double limit = limitBytes_ > 0 ? limitBytes_ : total;
  const double allocated = static_cast<double>(allocatedNow());
  // Within the share of the limit, and without a budget also within what the device has free
  // (other processes may hold some of it).
  double room = kUsableMemoryShare * limit - allocated;
  if (limitBytes_ <= 0) room = std::min(room, static_cast<double>(availableDeviceBytes(device_)) - (1 - kUsableMemoryShare) * total);
  const double needed = static_cast<double>(microBatches_) * static_cast<double>(it->second);
  if (needed <= room) return {};
  return {Verdict::TooLarge,
          fmt::format("one takes up to {:.2f} GiB, so {} in one pass would need {:.2f} GiB, more than the {:.2f} GiB left within "
                      "{:.0f}% of {} ({:.2f} GiB) beside the {:.2f} GiB allocated",
                      static_cast<double>(it->second) / kBytesPerGiB, microBatches_, needed / kBytesPerGiB, std::max(0.0, room) / kBytesPerGiB,
                      kUsableMemoryShare * 100, limitBytes_ > 0 ? "vram_budget_gb" : "the device's memory", limit / kBytesPerGiB, allocated / kBytesPerGiB)};
}

}  // namespace sinter::train
