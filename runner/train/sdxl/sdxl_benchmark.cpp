#include "train/sdxl/sdxl_benchmark.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "compile/compile_plan.h"
#include "compile/gemm_tuning.h"
#include "models/unet/sdxl_unet.h"
#include "models/weights/served_weight.h"
#include "network/lora_network.h"
#include "network/lycoris_step_deltas.h"
#include "train/base/device_info.h"
#include "train/base/mixed_precision.h"
#include "train/bench/benchmark_rows.h"
#include "train/bench/capture_facts.h"
#include "train/capture/graphed_regions.h"
#include "train/capture/step_executor.h"
#include "train/methods/lora_method.h"
#include "train/optim/adamw.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/optimizer_update.h"
#include "train/objectives/unet_train_step.h"
#include "train/sdxl/sdxl_unet_regions.h"

namespace sinter::train {

namespace {

double relativeError(const torch::Tensor& out, const torch::Tensor& ref) {
  return ((out.to(torch::kFloat64) - ref.to(torch::kFloat64)).norm() / ref.to(torch::kFloat64).norm()).item<double>();
}

}  // namespace

int runSdxlBenchmark(const Config& config, long long steps, bool tiny, SdxlBenchRows which) {
  BenchRanks ranks(config);
  const torch::Device device = ranks.device();
  if (ranks.several() && which == SdxlBenchRows::Modes) which = SdxlBenchRows::Scaling;
  applyCudaMathFlags(device, config.getBool("cuda_allow_tf32"), config.getBool("cuda_cudnn_benchmark"));
  const torch::Dtype dtype = device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  const models::SdxlUnetConfig unetConfig = tiny ? models::SdxlUnetConfig::tiny() : models::SdxlUnetConfig::full();
  const int64_t side = tiny ? 256 : 1024, rank = tiny ? 4 : 32, tokens = 77;
  torch::manual_seed(0);

  spdlog::info("building the {} SDXL U-Net with random weights on {}", tiny ? "tiny" : "full-size", describeDevice(device));
  models::SdxlUnet unet(unetConfig);
  unet->to(device);
  const auto on = torch::TensorOptions(device);
  // The fp32 reference forward comes first, while the weights are still fp32.
  double agreement = 0;
  {
    torch::NoGradGuard noGrad;
    torch::Tensor x = torch::randn({1, 4, side / 8, side / 8}, on);
    torch::Tensor t = torch::randint(0, 1000, {1}, on.dtype(torch::kLong));
    torch::Tensor context = torch::randn({1, tokens, unetConfig.contextDim}, on);
    torch::Tensor y = torch::randn({1, unetConfig.admInChannels}, on);
    torch::Tensor ref = unet->forward(x, t, context, y);
    castFrozen(*unet, dtype);
    agreement = relativeError(unet->forward(x.to(dtype), t, context.to(dtype), y.to(dtype)), ref);
  }
  // fp8_base (or the memory plan's choice): the U-Net's Linear and Conv2d weights in float8, as a
  // run stores them (sdxl_model_set.h); a libtorch without float8 throws naming the option.
  const bool fp8Base = config.getBool("fp8_base") || config.getBool("fp8_base_unet");
  if (fp8Base) {
    models::storeLinearsInFloat8(*unet);
    models::storeConvolutionsInFloat8(*unet);
  }
  // cpu_offload_checkpointing turns checkpointing on (as sdxl_family.cpp, after sd-scripts).
  unet->setGradientCheckpointing(config.getBool("gradient_checkpointing") || config.getBool("cpu_offload_checkpointing"));
  unet->setCheckpointOffload(config.getBool("cpu_offload_checkpointing"));

  network::LoraNetworkOptions loraOptions;
  loraOptions.dim = rank;
  loraOptions.alpha = static_cast<double>(rank);
  loraOptions.device = device;
  network::LoraNetwork lora(loraOptions);
  lora.attach(network::sdxlLoraRule(network::LoraComponent::Unet), *unet);
  const std::vector<OptimizerGroup> groups = loraOptimizerGroups(lora.parameterGroups(std::nullopt, std::nullopt, 1e-4));
  AdamW optimizer(groups, AdamWHyperparameters{});
  LrScheduleOptions lrOptions;
  lrOptions.totalSteps = 1000000;
  LrSchedule schedule(lrOptions);
  UnetStepOptions stepOptions;
  stepOptions.computeDtype = dtype;
  UnetTrainStep step(unet, stepOptions, device, 0);
  // fp32 LoRA weights, bf16 U-Net: the step uses bf16 copies kept current, as a training run does.
  const std::unique_ptr<ComputeCopies> copies = loraComputeCopies(lora, dtype);
  OptimizerUpdate update(optimizer, schedule, 1.0, false, device, copies.get());
  ranks.attach(update);

  // Random inputs of a shape, staged once (a training run stages each batch the same way).
  auto stageRandom = [&](int64_t batch, int64_t width, int64_t height) {
    UnetStepBatch in{torch::randn({batch, 4, height / 8, width / 8}, on).to(dtype), torch::randn({batch, tokens, unetConfig.contextDim}, on).to(dtype),
                     torch::randn({batch, unetConfig.admInChannels}, on).to(dtype), torch::ones({batch}, on)};
    return step.stage(in);
  };

  const std::vector<BenchMode> modes = {
      {"eager (compile off)", false},
      {"inductor, default", true, "inductor", "default", false},
      {"inductor, reduce-overhead", true, "inductor", "reduce-overhead", false},
      {"cudagraphs, fullgraph (stock kernels)", true, "cudagraphs", "default", true},
      {"inductor, reduce-overhead, fullgraph", true, "inductor", "reduce-overhead", true},
      {"inductor, max-autotune, fullgraph", true, "inductor", "max-autotune", true},
  };
  const std::vector<int64_t> batchSizes = tiny ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1, 4};
  const std::vector<std::pair<int64_t, int64_t>> threeBuckets = tiny ? std::vector<std::pair<int64_t, int64_t>>{{256, 256}, {192, 320}, {320, 192}}
                                                                     : std::vector<std::pair<int64_t, int64_t>>{{1024, 1024}, {896, 1152}, {1152, 896}};

  BenchModel model{Family::SDXL, [&](const StepShape& s) { return step.stagedLoss(s); },
                   [&](GraphedRegions* regions) {
                     if (regions) captureUnetBlocks(unet, *regions);
                     else releaseUnetBlocks(unet);
                   },
                   [&](bool on) { unet->setFusedKernels(on); }, step.generator()};
  auto row = [&](const BenchMode& m, const std::vector<StepShape>& shapes, const std::string& label) {
    return runBenchRow(config, device, update, model, m, shapes, label, steps);
  };

  std::vector<BenchRow> rows;
  if (which == SdxlBenchRows::Optimizers) {
    // Each optimizer at its default arguments, with its own update around the same step; the
    // learning rate is AdamW's 1e-4 (D-Adaptation and Prodigy scale it by their estimate).
    const StepShape shape = stageRandom(1, side, side);
    for (const std::string& type : optimizerNames()) {
      const std::unique_ptr<Optimizer> other = makeOptimizer(parseOptimizerSettings(type, {}), groups, /*fusedBackwardPass=*/false);
      OptimizerUpdate otherUpdate(*other, schedule, 1.0, false, device, copies.get());
      ranks.attach(otherUpdate);
      for (const BenchMode& m : {modes[0], modes[4]})
        rows.push_back(runBenchRow(config, device, otherUpdate, model, m, {shape}, "bs1 " + std::to_string(side) + ", " + type, steps));
    }
  }
  if (which == SdxlBenchRows::Networks) {
    // Standard LoRA first, then each LyCORIS algorithm in its place on the same U-Net (attn-mlp is
    // the preset that adapts what networks.lora adapts), each with its own AdamW around the step.
    const StepShape shape = stageRandom(1, side, side);
    const std::string at = "bs1 " + std::to_string(side) + ", ";
    for (const BenchMode& m : {modes[0], modes[4]})
      rows.push_back(row(m, {shape}, at + "LoRA, " + std::to_string(lora.parameterCount()) + " params"));
    lora.detach();
    const std::string factor = tiny ? "factor=2" : "factor=8";
    const std::vector<std::vector<std::string>> algos{{"algo=locon"}, {"algo=locon", "dora_wd=True"}, {"algo=loha"},
                                                      {"algo=lokr", factor}, {"algo=ia3"}, {"algo=full"}};
    for (std::vector<std::string> args : algos) {
      args.push_back("preset=attn-mlp");
      network::LoraNetworkOptions o = loraOptions;
      o.args = network::parseNetworkArgs(args, "lycoris.kohya");
      network::LoraNetwork net(o);
      net.attach(network::sdxlLoraRule(network::LoraComponent::Unet), *unet);
      AdamW netOptimizer(loraOptimizerGroups(net.parameterGroups(std::nullopt, std::nullopt, 1e-4)), AdamWHyperparameters{});
      OptimizerUpdate netUpdate(netOptimizer, schedule, 1.0, false, device, nullptr);
      ranks.attach(netUpdate);
      std::string label = at + "LyCORIS " + args[0].substr(5);
      if (args.size() > 2) label += " " + args[1];
      label += ", " + std::to_string(net.parameterCount()) + " params";
      for (const BenchMode& m : {modes[0], modes[4]})
        rows.push_back(runBenchRow(config, device, netUpdate, model, m, {shape}, label, steps));
      // Gradient accumulation: a full-size delta rebuilt in each micro-batch's forward (LyCORIS's
      // way) against built once per step (network/lycoris_step_deltas.h), captured.
      network::LycorisStepDeltas deltas(net, dtype);
      if (deltas.size() > 0) {
        const int micro = 4;
        const std::string accumulated = label + ", " + std::to_string(micro) + " micro-batches, delta per ";
        rows.push_back(runBenchRow(config, device, netUpdate, model, modes[4], {shape}, accumulated + "forward", steps, micro));
        deltas.start();
        netUpdate.setDerivedWeights(lycorisStepDerivedWeights(deltas));
        rows.push_back(runBenchRow(config, device, netUpdate, model, modes[4], {shape}, accumulated + "step", steps, micro));
        netUpdate.setDerivedWeights({});
      }
      net.detach();
    }
  }
  if (which == SdxlBenchRows::Scaling) {
    const StepShape shape = stageRandom(1, side, side);
    for (const BenchMode& m : {modes[0], modes[4]})
      rows.push_back(row(m, {shape}, "bs1 " + std::to_string(side) + "x" + std::to_string(side)));
  }
  const bool modeRows = which == SdxlBenchRows::Modes;
  for (int64_t batch : modeRows ? batchSizes : std::vector<int64_t>{}) {
    const StepShape shape = stageRandom(batch, side, side);
    for (const BenchMode& m : modes)
      rows.push_back(row(m, {shape}, "bs" + std::to_string(batch) + " " + std::to_string(side) + "x" + std::to_string(side)));
  }
  std::vector<StepShape> mixed;
  if (modeRows) {
    for (const auto& [w, h] : threeBuckets) mixed.push_back(stageRandom(1, w, h));
    for (const BenchMode& m : {modes[0], modes[2], modes[4]}) rows.push_back(row(m, mixed, "bs1, 3 buckets"));
  }

  if (!ranks.printing()) return 0;
  std::printf("benchmark: SDXL U-Net LoRA training step (%s), rank %lld on %zu modules (%lld parameters), %s, "
              "gradient checkpointing %s, fp8_base %s\n",
              tiny ? "tiny" : "full size", static_cast<long long>(rank), lora.modules().size(),
              static_cast<long long>(lora.parameterCount()), dtype == torch::kBFloat16 ? "bf16" : "fp32",
              config.getBool("gradient_checkpointing") ? "on" : "off", fp8Base ? "on" : "off");
  std::printf("device: %s; %s; %lld timed steps per row\n", describeDevice(device).c_str(), ranks.describe().c_str(), steps);
  printBenchRows(rows);
  std::printf("fp32 vs %s forward relative error: %.3e\n", dtype == torch::kBFloat16 ? "bf16" : "fp32", agreement);
  return 0;
}

}  // namespace sinter::train
