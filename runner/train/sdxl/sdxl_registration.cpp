#include "train/sdxl/sdxl_registration.h"

#include "train/methods/block_learning_rates.h"
#include "train/sdxl/sdxl_benchmark.h"
#include "train/sdxl/sdxl_block_lr.h"
#include "train/sdxl/sdxl_family.h"

namespace sinter::train {

FamilyRegistration sdxlRegistration() {
  FamilyRegistration r;
  r.family = Family::SDXL;
  r.make = [](const RunContext& run) -> std::unique_ptr<FamilyPart> { return std::make_unique<SdxlFamily>(run); };
  r.networkModule = "networks.lora";  // sdxl_train_network.py's
  // Samples: sample_sampler's schedulers (sample/diffusion_samplers.h); fp8_base is FLUX's only so
  // far; sdxl_train.py trains the text encoders with train_text_encoder.
  r.benchmark = [](const Config& config, long long steps, bool tiny, bool scalingRows) {
    return runSdxlBenchmark(config, steps, tiny, scalingRows ? SdxlBenchRows::Scaling : SdxlBenchRows::Modes);
  };
  r.optimizerBenchmark = [](const Config& config, long long steps, bool tiny) {
    return runSdxlBenchmark(config, steps, tiny, SdxlBenchRows::Optimizers);
  };
  r.networkBenchmark = [](const Config& config, long long steps, bool tiny) {
    return runSdxlBenchmark(config, steps, tiny, SdxlBenchRows::Networks);
  };
  // sdxl_train.py's block_lr: 23 rates for the U-Net's blocks.
  r.blockLrCount = kSdxlBlockLrCount;
  r.blockLrIndex = sdxlBlockLrIndex;
  r.checkConfig = [](const Config& config, PreflightChecks& k) {
    if (config.getString("block_lr").empty()) return true;
    return k.parse("block_lr", [&] { parseBlockLearningRates(config.getString("block_lr"), kSdxlBlockLrCount); });
  };
  return r;
}

}  // namespace sinter::train
