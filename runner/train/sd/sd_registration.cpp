#include "train/sd/sd_registration.h"

#include <spdlog/spdlog.h>

#include "network/lora_network.h"
#include "train/objectives/unet_train_step.h"
#include "train/sd/sd_module_outputs.h"
#include "train/sd/sd_family.h"

namespace sinter::train {

namespace {

FamilyRegistration sdRegistration(Family family) {
  const models::SdVersion version = family == Family::SD15 ? models::SdVersion::V1 : models::SdVersion::V2;
  FamilyRegistration r;
  r.family = family;
  r.make = [version](const RunContext& run) -> std::unique_ptr<FamilyPart> { return std::make_unique<SdFamily>(run, version); };
  r.compileTargets = unetCompileTargets();
  r.writeRandomCheckpoint = [version](const std::string& out, bool tiny, std::uint64_t seed) {
    spdlog::info("writing a {} {} checkpoint with random weights to {}", tiny ? "tiny" : "full-size",
                 version == models::SdVersion::V1 ? "SD 1.5" : "SD 2.1", out);
    models::writeRandomSdCheckpoint(out, version, tiny, seed);
    spdlog::info("wrote {}", out);
  };
  r.moduleOutputs = sdModuleOutputsTool;
  r.checkConfig = [family](const Config& config, PreflightChecks& k) {
    bool ok = true;
    // sd-scripts' v2 says the checkpoint is SD 2.x; the run trains what the checkpoint is.
    if (family == Family::SD15 && config.getBool("v2")) {
      k.error("v2", "v2 = true, but the checkpoint is SD 1.x (its text encoder is CLIP ViT-L under cond_stage_model.transformer.)");
      ok = false;
    }
    if (family == Family::SD2 && !config.getBool("v2"))
      k.warning("v2", "the checkpoint is SD 2.x (OpenCLIP ViT-H under cond_stage_model.model.) and is trained as SD 2.x; "
                      "sd-scripts needs v2 = true for it");
    // Per-block ranks are counted in SDXL's 23 blocks here; SD's 25 are not built yet.
    ok &= k.parse("network_args", [&] {
      const network::LoraNetworkArgs a = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
      if (a.blockDims || a.blockAlphas || a.convBlockDims || a.convBlockAlphas || a.blockLrWeight)
        throw std::invalid_argument("block_dims, block_alphas, conv_block_dims, conv_block_alphas and down/mid/up_lr_weight are "
                                    "built for SDXL's 23 blocks; SD 1.x/2.x's 25 blocks are not built yet");
    });
    return ok;
  };
  return r;
}

}  // namespace

FamilyRegistration sd15Registration() { return sdRegistration(Family::SD15); }
FamilyRegistration sd2Registration() { return sdRegistration(Family::SD2); }

}  // namespace sinter::train
