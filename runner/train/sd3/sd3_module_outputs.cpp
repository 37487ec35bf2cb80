#include "train/sd3/sd3_module_outputs.h"

#include <spdlog/spdlog.h>

#include "io/safetensors.h"
#include "models/checkpoints/sd3_checkpoint.h"
#include "train/base/device_info.h"
#include "train/base/module_inputs.h"
#include "train/sd3/sd3_model_set.h"

namespace sinter::train {

ModuleOutputs sd3ModuleOutputsTool(const Config& config, const std::map<std::string, torch::Tensor>& inputs, const torch::Device& device) {
  ModuleOutputs out;
  const std::string path = config.getString("pretrained_model_name_or_path");
  if (path.empty()) {
    out.missing = "--pretrained_model_name_or_path (an SD 3 checkpoint)";
    return out;
  }
  torch::NoGradGuard noGrad;
  const io::SafetensorsFile file(path);
  models::Sd3Mmdit mmdit = models::loadSd3Mmdit(file);
  mmdit->to(device);
  mmdit->eval();
  spdlog::info("running SD 3 ({}) {} on {} in fp32", mmdit->config().modelType(), path, describeDevice(device));
  const torch::Tensor x = moduleInput(inputs, "x", 4, device), t = moduleInput(inputs, "timesteps", 1, device),
                      y = moduleInput(inputs, "y", 2, device), context = moduleInput(inputs, "context", 3, device);
  if (x.defined() && t.defined() && y.defined() && context.defined())
    out.tensors.emplace_back("mmdit", mmdit(x, t, y, context).contiguous().cpu());
  mmdit = nullptr;
  const torch::Tensor images = moduleInput(inputs, "images", 4, device);
  if (images.defined() && file.hasKeyStartingWith(models::kSd3VaePrefix)) {
    models::FluxAutoencoder vae = models::loadSd3Vae(file);
    vae->to(device);
    vae->eval();
    const models::LatentDistribution d = vae->encode(images);
    const torch::Tensor latents = (d.mean - vae->config().shiftFactor) * vae->config().scaleFactor;
    out.tensors.emplace_back("vae_mean", d.mean.contiguous().cpu());
    out.tensors.emplace_back("vae_latents", latents.contiguous().cpu());
    out.tensors.emplace_back("vae_decoded", vae->decodeLatents(latents).contiguous().cpu());
  }
  for (const bool bigG : {false, true}) {
    const std::string name = bigG ? "clip_g" : "clip_l";
    const torch::Tensor ids = moduleInput(inputs, name + "_ids", 2, device);
    const std::string given = config.getString(name);
    if (!ids.defined() || (given.empty() && !file.hasKeyStartingWith(bigG ? models::kSd3ClipGPrefix : models::kSd3ClipLPrefix)))
      continue;
    models::ClipTextModel clip = given.empty() ? loadSd3Clip(file, bigG) : loadSd3Clip(io::SafetensorsFile(given), bigG);
    clip->to(device);
    clip->eval();
    for (const bool masked : {false, true}) {  // apply_lg_attn_mask off and on
      const auto o = clip->projectedOutput(ids.to(torch::kLong), masked);
      const std::string prefix = name + (masked ? "_masked" : "");
      out.tensors.emplace_back(prefix + "_penultimate", o.penultimate.contiguous().cpu());
      out.tensors.emplace_back(prefix + "_embeds", o.textEmbeds.contiguous().cpu());
    }
  }
  out.metadata = {{"checkpoint", path}};
  out.inputNames = "x, timesteps, y, context; images; clip_l_ids, clip_g_ids";
  return out;
}

}  // namespace sinter::train
