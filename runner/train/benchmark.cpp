#include "train/benchmark.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "models/sdxl_unet.h"
#include "network/lora_network.h"
#include "train/adamw.h"
#include "train/device_info.h"
#include "train/lr_schedule.h"
#include "train/mixed_precision.h"
#include "train/optimizer_update.h"
#include "train/sdxl_train_step.h"

namespace sinter::train {

namespace {

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

double relativeError(const torch::Tensor& out, const torch::Tensor& ref) {
  return ((out.to(torch::kFloat64) - ref.to(torch::kFloat64)).norm() / ref.to(torch::kFloat64).norm()).item<double>();
}

}  // namespace

int runBenchmark(const Config& config, long long steps, bool tiny) {
  const torch::Device device = trainingDevice();
  applyCudaMathFlags(device, config.getBool("cuda_allow_tf32"), config.getBool("cuda_cudnn_benchmark"));
  const torch::Dtype dtype = device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  const models::SdxlUnetConfig unetConfig = tiny ? models::SdxlUnetConfig::tiny() : models::SdxlUnetConfig::full();
  const int64_t batch = 1, side = tiny ? 256 : 1024, rank = tiny ? 4 : 32;
  torch::manual_seed(0);

  spdlog::info("building the {} SDXL U-Net with random weights on {}", tiny ? "tiny" : "full-size", describeDevice(device));
  models::SdxlUnet unet(unetConfig);
  unet->to(device);
  // The fp32 reference forward comes first, while the weights are still fp32.
  torch::Tensor x = torch::randn({batch, 4, side / 8, side / 8}, torch::TensorOptions(device));
  torch::Tensor t = torch::randint(0, 1000, {batch}, torch::TensorOptions(device).dtype(torch::kLong));
  torch::Tensor context = torch::randn({batch, 77, unetConfig.contextDim}, torch::TensorOptions(device));
  torch::Tensor y = torch::randn({batch, unetConfig.admInChannels}, torch::TensorOptions(device));
  double agreement = 0;
  {
    torch::NoGradGuard noGrad;
    torch::Tensor ref = unet->forward(x, t, context, y);
    castFrozen(*unet, dtype);
    torch::Tensor low = unet->forward(x.to(dtype), t, context.to(dtype), y.to(dtype));
    agreement = relativeError(low, ref);
  }
  unet->setGradientCheckpointing(config.getBool("gradient_checkpointing"));

  network::LoraNetworkOptions loraOptions;
  loraOptions.dim = rank;
  loraOptions.alpha = static_cast<double>(rank);
  loraOptions.device = device;
  network::LoraNetwork lora(loraOptions);
  lora.attach(network::sdxlLoraRule(network::LoraComponent::Unet), *unet);
  std::vector<OptimizerGroup> groups;
  for (auto& g : lora.parameterGroups(std::nullopt, std::nullopt, 1e-4)) groups.push_back(OptimizerGroup{g.label, g.lr, g.params});
  AdamW optimizer(groups, AdamWHyperparameters{});
  LrScheduleOptions lrOptions;
  lrOptions.totalSteps = steps + 3;
  LrSchedule schedule(lrOptions);
  SdxlStepOptions stepOptions;
  stepOptions.computeDtype = dtype;
  SdxlTrainStep step(unet, stepOptions, device, 0);
  OptimizerUpdate update(optimizer, schedule, 1.0, false, device);
  SdxlStepBatch in{x.to(dtype), context.to(dtype), y.to(dtype), torch::ones({batch}, torch::TensorOptions(device))};

  using Clock = std::chrono::steady_clock;
  const int warmupSteps = 3;
  const auto warmStart = Clock::now();
  for (int i = 0; i < warmupSteps; ++i) {
    update.backward(step.loss(in), 1.0);
    update.apply();
  }
  synchronize(device);
  const double warmupSeconds = std::chrono::duration<double>(Clock::now() - warmStart).count();
  std::vector<double> ms;
  torch::Tensor loss;
  for (long long i = 0; i < steps; ++i) {
    const auto s = Clock::now();
    loss = step.loss(in);
    update.backward(loss, 1.0);
    update.apply();
    synchronize(device);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  const double median = sorted[sorted.size() / 2];
  std::printf("benchmark: SDXL U-Net LoRA training step (%s), batch %lld, %lldx%lld, rank %lld, %s, gradient checkpointing %s\n",
              tiny ? "tiny" : "full size", static_cast<long long>(batch), static_cast<long long>(side), static_cast<long long>(side),
              static_cast<long long>(rank), dtype == torch::kBFloat16 ? "bf16" : "fp32",
              config.getBool("gradient_checkpointing") ? "on" : "off");
  std::printf("device: %s\n", describeDevice(device).c_str());
  std::printf("LoRA modules: %zu, parameters: %lld\n", lora.modules().size(), static_cast<long long>(lora.parameterCount()));
  std::printf("warm-up: %d steps in %.2f s\n", warmupSteps, warmupSeconds);
  std::printf("steps timed: %lld, mean %.1f ms, median %.1f ms, min %.1f ms, max %.1f ms\n", steps, mean, median, sorted.front(),
              sorted.back());
  std::printf("peak memory: %.0f MiB\n", peakMemoryMb(device));
  std::printf("fp32 vs %s forward relative error: %.3e\n", dtype == torch::kBFloat16 ? "bf16" : "fp32", agreement);
  std::printf("last loss: %.5f\n", loss.item<double>());
  return 0;
}

}  // namespace sinter::train
