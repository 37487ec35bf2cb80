#include "train/base/host_parking.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sinter::train {

namespace {

double gib(const torch::nn::Module& module) {
  double bytes = 0;
  for (const torch::Tensor& t : module.parameters()) bytes += static_cast<double>(t.nbytes());
  for (const torch::Tensor& t : module.buffers()) bytes += static_cast<double>(t.nbytes());
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

}  // namespace

void HostParking::park(const std::string& name, torch::nn::Module& module) {
  if (device_.is_cpu()) return;
  module.to(torch::kCPU);
  parked_.emplace_back(name, &module);
  spdlog::info("{} wait in host memory while training ({:.2f} GiB of device memory freed)", name, gib(module));
}

HostParking::Visit::Visit(HostParking& parking, std::vector<std::string> only) : parking_(parking) {
  for (auto& [name, module] : parking_.parked_)
    if (only.empty() || std::find(only.begin(), only.end(), name) != only.end()) {
      module->to(parking_.device_);
      visiting_.push_back(module);
    }
}

HostParking::Visit::~Visit() {
  for (torch::nn::Module* module : visiting_) module->to(torch::kCPU);
}

}  // namespace sinter::train
