#include "cli/flux_module_outputs.h"

#include "train/base/module_inputs.h"

namespace sinter::runner {

std::map<std::string, torch::Tensor> fluxModuleOutputs(models::FluxTransformer* transformer, models::FluxAutoencoder* ae,
                                                       models::T5Encoder* t5,
                                                       const std::map<std::string, torch::Tensor>& inputs) {
  torch::NoGradGuard noGrad;
  std::map<std::string, torch::Tensor> out;
  if (transformer && *transformer) {
    const torch::Tensor weight = (*transformer)->img_in->weight;
    const torch::Device device = weight.device();
    const torch::Tensor img = train::moduleInput(inputs, "img", 3, device), imgIds = train::moduleInput(inputs, "img_ids", 3, device),
                        txt = train::moduleInput(inputs, "txt", 3, device), txtIds = train::moduleInput(inputs, "txt_ids", 3, device),
                        timesteps = train::moduleInput(inputs, "timesteps", 1, device), y = train::moduleInput(inputs, "y", 2, device),
                        guidance = train::moduleInput(inputs, "guidance", 1, device);
    if (img.defined() && imgIds.defined() && txt.defined() && txtIds.defined() && timesteps.defined() && y.defined()) {
      const torch::Dtype dtype = weight.scalar_type();
      out["flux"] = (*transformer)(img.to(dtype), imgIds, txt.to(dtype), txtIds, timesteps, y.to(dtype), guidance).contiguous();
    }
  }
  if (ae && *ae) {
    const torch::Tensor weight = (*ae)->encoder->conv_in->weight;
    const torch::Tensor images = train::moduleInput(inputs, "images", 4, weight.device());
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
    const torch::Tensor ids = train::moduleInput(inputs, "t5_ids", 2, device), mask = train::moduleInput(inputs, "t5_mask", 2, device);
    if (ids.defined()) out["t5"] = (*t5)(ids.to(torch::kLong), mask).contiguous();
  }
  return out;
}

}  // namespace sinter::runner
