#include "train/flux/flux_benchmark.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "models/flux/flux_transformer.h"
#include "network/lora_network.h"
#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/base/mixed_precision.h"
#include "train/bench/benchmark_rows.h"
#include "train/flux/flux_family.h"
#include "train/flux/flux_model_set.h"
#include "train/flux/flux_regions.h"
#include "train/flux/flux_train_step.h"
#include "train/methods/lora_method.h"
#include "train/optim/fused_backward.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/optimizer_update.h"

namespace sinter::train {

int runFluxBenchmark(const Config& config, long long steps, bool tiny, bool scalingRows) {
  BenchRanks ranks(config);
  const torch::Device device = ranks.device();
  scalingRows |= ranks.several();
  applyCudaMathFlags(device, config.getBool("cuda_allow_tf32"), config.getBool("cuda_cudnn_benchmark"));
  const torch::Dtype dtype = device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  const models::FluxConfig fluxConfig = tiny ? models::FluxConfig::tiny() : models::FluxConfig::dev();
  // Latents of 1024x1024 are 128x128 (4096 tokens after 2x2 packing); T5 gives 512 tokens for dev.
  const int64_t latentSide = tiny ? 32 : 128, tokens = tiny ? 32 : 512, rank = tiny ? 4 : 32;
  torch::manual_seed(0);

  const FluxWeightPlacement placement = FluxWeightPlacement::fromConfig(config);
  // Checked before the model is built (minutes at full size), as full_weights_method.h refuses them.
  if (placement.fp8Base && config.tab() != Tab::LoRA)
    throw std::invalid_argument("fp8_base stores frozen weights; a full-weight benchmark trains them: turn fp8_base off");
  if (placement.blocksToSwap > 0 && config.tab() != Tab::LoRA && !fusedBackwardPassRequested(config))
    throw std::invalid_argument("blocks_to_swap in a full-weight benchmark needs --fused_backward_pass (full_weights_method.h)");
  spdlog::info("building the {} FLUX.1-dev transformer with random weights on {}", tiny ? "tiny" : "full-size", describeDevice(device));
  models::FluxTransformer transformer(fluxConfig);
  placeFluxTransformer(*transformer, device, dtype, placement);
  // cpu_offload_checkpointing turns checkpointing on (as flux_family.cpp, after sd-scripts).
  transformer->setGradientCheckpointing(config.getBool("gradient_checkpointing") || config.getBool("cpu_offload_checkpointing"), false);
  transformer->setCheckpointOffload(config.getBool("cpu_offload_checkpointing"));

  // LoRA (rank 32, alpha 16, AdamW as sd-scripts' bench), or with --training_type dreambooth|finetune
  // the whole transformer as flux_train.py's low-memory recipe trains it: Adafactor (scale_parameter,
  // relative_step and warmup_init off, lr 1e-5), fused_backward_pass, swapped blocks stepped in it.
  const bool fullWeights = config.tab() != Tab::LoRA;
  network::LoraNetworkOptions loraOptions;
  loraOptions.dim = rank;
  loraOptions.alpha = static_cast<double>(rank) / 2;  // sd-scripts' bench: rank 32, alpha 16
  loraOptions.device = device;
  network::LoraNetwork lora(loraOptions);
  std::vector<OptimizerGroup> groups;
  int64_t trainedParameters = 0;
  if (fullWeights) {
    OptimizerGroup all{"transformer", 1e-5, {}};
    for (torch::Tensor& p : transformer->parameters()) {
      p.set_requires_grad(true);
      all.params.push_back(p);
      trainedParameters += p.numel();
    }
    groups.push_back(std::move(all));
  } else {
    lora.attach(network::fluxLoraRule(network::LoraComponent::Unet), *transformer);
    groups = loraOptimizerGroups(lora.parameterGroups(std::nullopt, std::nullopt, 1e-4));
    trainedParameters = lora.parameterCount();
  }
  const bool fused = fullWeights && fusedBackwardPassRequested(config);
  const OptimizerSettings settings =
      fullWeights ? parseOptimizerSettings("Adafactor", {"scale_parameter=False", "relative_step=False", "warmup_init=False"})
                  : parseOptimizerSettings("AdamW", {});
  const std::unique_ptr<Optimizer> optimizer = makeOptimizer(settings, groups, fused);
  LrScheduleOptions lrOptions;
  lrOptions.totalSteps = 1000000;
  LrSchedule schedule(lrOptions);
  FluxStepOptions stepOptions;
  stepOptions.computeDtype = dtype;
  stepOptions.guidanceScale = 1.0;
  FluxTrainStep step(transformer, stepOptions, device, 0);
  const std::unique_ptr<ComputeCopies> copies = fullWeights ? nullptr : loraComputeCopies(lora, dtype);
  OptimizerUpdate update(*optimizer, schedule, 1.0, false, device, copies.get(), fused);
  if (fused)
    for (const auto& swap : {transformer->doubleSwap(), transformer->singleSwap()})
      if (swap) update.fusedBackwardPass()->stepStreamedWeights(swap);
  ranks.attach(update, kFluxOverlapsGradientReduction);

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
                   [&](bool on) { transformer->setFusedKernels(on); }, step.generator()};
  std::vector<BenchMode> modes = {
      {"eager (compile off)", false},
      {"inductor, default (fused kernels, no graphs)", true, "inductor", "default", false},
      {"inductor, reduce-overhead (per block)", true, "inductor", "reduce-overhead", false},
      {"inductor, reduce-overhead, fullgraph", true, "inductor", "reduce-overhead", true},
      {"inductor, max-autotune, fullgraph", true, "inductor", "max-autotune", true},
  };
  if (fused) modes.resize(2);  // the fused backward pass steps inside autograd: nothing to capture (capture_facts.cpp)
  else if (scalingRows) modes = {modes[0], modes[3]};
  const std::string label = "bs1 " + std::to_string(latentSide * 8) + "x" + std::to_string(latentSide * 8) + ", " +
                            std::to_string(tokens) + " T5 tokens";
  std::vector<BenchRow> rows;
  for (const BenchMode& m : modes) rows.push_back(runBenchRow(config, device, update, model, m, {shape}, label, steps));

  const std::string what = fullWeights ? std::string("full-weight training step, ") + settings.className() +
                                              (fused ? " with fused_backward_pass" : "")
                                        : "LoRA training step, rank " + std::to_string(rank) + " alpha " + std::to_string(rank / 2) +
                                              " on " + std::to_string(lora.modules().size()) + " modules";
  if (!ranks.printing()) return 0;
  std::printf("benchmark: FLUX.1-dev transformer %s (%s, %lld trained parameters), "
              "%s, gradient checkpointing %s, fp8_base %s%s, blocks_to_swap %lld%s%s\n",
              what.c_str(), tiny ? "tiny" : "full size", static_cast<long long>(trainedParameters), dtype == torch::kBFloat16 ? "bf16" : "fp32",
              config.getBool("gradient_checkpointing") ? "on" : "off", placement.fp8Base ? "on" : "off",
              placement.fp8Compute.fastForward ? (placement.fp8Compute.fastBackward ? " (fp8_scaled, fp8_fast: forward and backward)"
                                                                                      : " (fp8_scaled, fp8_fast: forward only)")
              : placement.fp8Scaled ? " (fp8_scaled)" : "",
              static_cast<long long>(placement.blocksToSwap), transformer->streamedBlocks().empty() ? "" : " (streamed: ",
              transformer->streamedBlocks().empty() ? "" : (transformer->streamedBlocks() + ")").c_str());
  std::printf("device: %s; %s; %lld timed steps per row\n", describeDevice(device).c_str(), ranks.describe().c_str(), steps);
  printBenchRows(rows);
  return 0;
}

}  // namespace sinter::train
