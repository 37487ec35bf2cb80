#include "train/sdxl/sdxl_registration.h"

#include "train/sdxl/sdxl_benchmark.h"
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
    return runSdxlBenchmark(config, steps, tiny, scalingRows);
  };
  r.optimizerBenchmark = [](const Config& config, long long steps, bool tiny) {
    return runSdxlBenchmark(config, steps, tiny, /*scalingRows=*/false, /*optimizerRows=*/true);
  };
  return r;
}

}  // namespace sinter::train
