#include "train/base/caching_stage.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "models/weights/served_weight.h"
#include "train/base/device_info.h"

namespace sinter::train {

CachingStage::CachingStage(std::string what, std::vector<torch::nn::Module*> modules, torch::Device device)
    : what_(std::move(what)), modules_(std::move(modules)), device_(device) {}

void CachingStage::onDevice() {
  if (moved_) return;
  spdlog::info("placing {} on {} for caching", what_, describeDevice(device_));
  for (torch::nn::Module* m : modules_) models::moveToDevice(*m, device_);
  moved_ = true;
}

}  // namespace sinter::train
