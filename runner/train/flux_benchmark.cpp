#include "train/flux_benchmark.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "models/flux_transformer.h"
#include "network/lora_network.h"
#include "train/adamw.h"
#include "train/benchmark_rows.h"
#include "train/device_info.h"
#include "train/config_values.h"
#include "train/flux_model_set.h"
#include "train/flux_regions.h"
#include "train/flux_train_step.h"
#include "train/lora_method.h"
#include "train/lr_schedule.h"
#include "train/mixed_precision.h"
#include "train/optimizer_update.h"

namespace sinter::train {

int runFluxBenchmark(const Config& config, long long steps, bool tiny) {
  const torch::Device device = trainingDevice();
  applyCudaMathFlags(device, config.getBool("cuda_allow_tf32"), config.getBool("cuda_cudnn_benchmark"));
  const torch::Dtype dtype = device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  const models::FluxConfig fluxConfig = tiny ? models::FluxConfig::tiny() : models::FluxConfig::dev();
  // Latents of 1024x1024 are 128x128 (4096 tokens after 2x2 packing); T5 gives 512 tokens for dev.
  const int64_t latentSide = tiny ? 32 : 128, tokens = tiny ? 32 : 512, rank = tiny ? 4 : 32;
  torch::manual_seed(0);

  spdlog::info("building the {} FLUX.1-dev transformer with random weights on {}", tiny ? "tiny" : "full-size", describeDevice(device));
  models::FluxTransformer transformer(fluxConfig);
  FluxWeightPlacement placement;
  placement.fp8Base = config.getBool("fp8_base");
  if (!isUnset(config.get("blocks_to_swap"))) placement.blocksToSwap = config.getInt("blocks_to_swap");
  placeFluxTransformer(*transformer, device, dtype, placement);
  transformer->setGradientCheckpointing(config.getBool("gradient_checkpointing"), false);

  network::LoraNetworkOptions loraOptions;
  loraOptions.dim = rank;
  loraOptions.alpha = static_cast<double>(rank) / 2;  // sd-scripts' bench: rank 32, alpha 16
  loraOptions.device = device;
  network::LoraNetwork lora(loraOptions);
  lora.attach(network::fluxLoraRule(network::LoraComponent::Unet), *transformer);
  std::vector<OptimizerGroup> groups;
  for (auto& g : lora.parameterGroups(std::nullopt, std::nullopt, 1e-4)) groups.push_back(OptimizerGroup{g.label, g.lr, g.params});
  AdamW optimizer(groups, AdamWHyperparameters{});
  LrScheduleOptions lrOptions;
  lrOptions.totalSteps = 1000000;
  LrSchedule schedule(lrOptions);
  FluxStepOptions stepOptions;
  stepOptions.computeDtype = dtype;
  stepOptions.guidanceScale = 1.0;
  FluxTrainStep step(transformer, stepOptions, device, 0);
  const std::unique_ptr<ComputeCopies> copies = loraComputeCopies(lora, dtype);
  OptimizerUpdate update(optimizer, schedule, 1.0, false, device, copies.get());

  const auto on = torch::TensorOptions(device).dtype(dtype);
  const StepShape shape = step.stage(FluxStepBatch{torch::randn({1, 16, latentSide, latentSide}, on),
                                                   torch::randn({1, tokens, fluxConfig.contextInDim}, on),
                                                   torch::ones({1, tokens}, on.dtype(torch::kFloat32)),
                                                   torch::randn({1, fluxConfig.vecInDim}, on), torch::ones({1}, on.dtype(torch::kFloat32))});
  BenchModel model{Family::FLUX, [&](const StepShape& s) { return step.stagedLoss(s); },
                   [&](GraphedRegions* regions) {
                     if (regions) captureFluxBlocks(transformer, *regions);
                     else releaseFluxBlocks(transformer);
                   },
                   [&](bool on) { transformer->setFusedKernels(on); }, " + fused QK RMSNorm+RoPE", step.generator()};
  const std::vector<BenchMode> modes = {
      {"eager (compile off)", false},
      {"inductor, default (fused kernels, no graphs)", true, "inductor", "default", false},
      {"inductor, reduce-overhead (per block)", true, "inductor", "reduce-overhead", false},
      {"inductor, reduce-overhead, fullgraph", true, "inductor", "reduce-overhead", true},
  };
  const std::string label = "bs1 " + std::to_string(latentSide * 8) + "x" + std::to_string(latentSide * 8) + ", " +
                            std::to_string(tokens) + " T5 tokens";
  std::vector<BenchRow> rows;
  for (const BenchMode& m : modes) rows.push_back(runBenchRow(config, device, update, model, m, {shape}, label, steps));

  std::printf("benchmark: FLUX.1-dev transformer LoRA training step (%s), rank %lld alpha %lld on %zu modules (%lld parameters), "
              "%s, gradient checkpointing %s, fp8_base %s, blocks_to_swap %lld%s%s\n",
              tiny ? "tiny" : "full size", static_cast<long long>(rank), static_cast<long long>(rank / 2), lora.modules().size(),
              static_cast<long long>(lora.parameterCount()), dtype == torch::kBFloat16 ? "bf16" : "fp32",
              config.getBool("gradient_checkpointing") ? "on" : "off", placement.fp8Base ? "on" : "off",
              static_cast<long long>(placement.blocksToSwap), transformer->streamedBlocks().empty() ? "" : " (streamed: ",
              transformer->streamedBlocks().empty() ? "" : (transformer->streamedBlocks() + ")").c_str());
  std::printf("device: %s; %lld timed steps per row\n", describeDevice(device).c_str(), steps);
  printBenchRows(rows);
  return 0;
}

}  // namespace sinter::train
