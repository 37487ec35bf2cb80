#include "train/base/host_parking.h"

#include <spdlog/spdlog.h>

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

HostParking::Visit::Visit(HostParking& parking) : parking_(parking) {
  for (auto& [name, module] : parking_.parked_) module->to(parking_.device_);
}

HostParking::Visit::~Visit() {
  for (auto& [name, module] : parking_.parked_) module->to(torch::kCPU);
}

}  // namespace sinter::train
