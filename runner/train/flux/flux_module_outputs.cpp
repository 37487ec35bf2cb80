#include "train/flux/flux_module_outputs.h"

#include <spdlog/spdlog.h>

#include "models/checkpoints/flux_checkpoint.h"
#include "train/base/device_info.h"
#include "train/base/module_inputs.h"

namespace sinter::train {

std::map<std::string, torch::Tensor> fluxModuleOutputs(models::FluxTransformer* transformer, models::FluxAutoencoder* ae,
                                                       models::T5Encoder* t5,
                                                       const std::map<std::string, torch::Tensor>& inputs) {
  torch::NoGradGuard noGrad;
  std::map<std::string, torch::Tensor> out;
  if (transformer && *transformer) {
    const torch::Tensor weight = (*transformer)->img_in->weight;
    const torch::Device device = weight.device();
    const torch::Tensor img = moduleInput(inputs, "img", 3, device), imgIds = moduleInput(inputs, "img_ids", 3, device),
                        txt = moduleInput(inputs, "txt", 3, device), txtIds = moduleInput(inputs, "txt_ids", 3, device),
                        timesteps = moduleInput(inputs, "timesteps", 1, device), y = moduleInput(inputs, "y", 2, device),
                        guidance = moduleInput(inputs, "guidance", 1, device), txtMask = moduleInput(inputs, "txt_mask", 2, device);
    const torch::Dtype dtype = weight.scalar_type();
    const bool inputsGiven = img.defined() && imgIds.defined() && txt.defined() && txtIds.defined() && timesteps.defined();
    if ((*transformer)->config().chroma()) {  // no CLIP-L (y); the T5 mask it needs
      if (inputsGiven && guidance.defined() && txtMask.defined())
        out["chroma"] = (*transformer)(img.to(dtype), imgIds, txt.to(dtype), txtIds, timesteps, torch::Tensor(), guidance, txtMask).contiguous();
    } else if (inputsGiven && y.defined()) {
      out["flux"] = (*transformer)(img.to(dtype), imgIds, txt.to(dtype), txtIds, timesteps, y.to(dtype), guidance).contiguous();
    }
  }
  if (ae && *ae) {
    const torch::Tensor weight = (*ae)->encoder->conv_in->weight;
    const torch::Tensor images = moduleInput(inputs, "images", 4, weight.device());
    if (images.defined()) {
      const models::LatentDistribution d = (*ae)->encode(images.to(weight.scalar_type()));
      const auto& c = (*ae)->config();
      const torch::Tensor latents = (d.mean - c.shiftFactor) * c.scaleFactor;
      out["ae_mean"] = d.mean.contiguous();
      out["ae_latents"] = latents.contiguous();
      out["ae_decoded"] = (*ae)->decodeLatents(latents).contiguous();
    }
  }
  if (t5 && *t5) {
    const torch::Device device = (*t5)->shared->weight.device();
    const torch::Tensor ids = moduleInput(inputs, "t5_ids", 2, device), mask = moduleInput(inputs, "t5_mask", 2, device);
    if (ids.defined()) out["t5"] = (*t5)(ids.to(torch::kLong), mask).contiguous();
  }
  return out;
}

ModuleOutputs fluxModuleOutputsTool(const Config& config, const std::map<std::string, torch::Tensor>& inputs, const torch::Device& device) {
  ModuleOutputs out;
  const std::string transformerPath = config.getString("pretrained_model_name_or_path"), aePath = config.getString("ae"),
                    t5Path = config.getString("t5xxl");
  if (transformerPath.empty() && aePath.empty() && t5Path.empty()) {
    out.missing = "--pretrained_model_name_or_path (a FLUX.1 transformer), --ae (ae.safetensors) and/or --t5xxl (a T5 encoder)";
    return out;
  }
  models::FluxTransformer transformer{nullptr};
  models::FluxAutoencoder ae{nullptr};
  models::T5Encoder t5{nullptr};
  if (!transformerPath.empty()) {
    transformer = models::loadFluxTransformer(transformerPath, torch::kFloat32);
    transformer->to(device);
    transformer->eval();
  }
  if (!aePath.empty()) {
    ae = models::loadFluxAutoencoder(aePath, torch::kFloat32);
    ae->to(device);
    ae->eval();
  }
  if (!t5Path.empty()) {
    t5 = models::loadT5Encoder(t5Path, torch::kFloat32);
    t5->to(device);
    t5->eval();
  }
  spdlog::info("running FLUX {} {} {} on {} in fp32", transformerPath, aePath, t5Path, describeDevice(device));
  for (auto& [name, tensor] : fluxModuleOutputs(&transformer, &ae, &t5, inputs)) out.tensors.emplace_back(name, tensor.cpu());
  out.metadata = {{"transformer", transformerPath}, {"ae", aePath}, {"t5xxl", t5Path}};
  out.inputNames = "img, img_ids, txt, txt_ids, timesteps, y[, guidance] (Chroma: guidance and txt_mask, no y); images; t5_ids";
  return out;
}

}  // namespace sinter::train
