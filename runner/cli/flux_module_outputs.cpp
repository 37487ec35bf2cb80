#include "cli/flux_module_outputs.h"

#include <stdexcept>

namespace sinter::runner {

namespace {

// The named input on `device`, or an undefined tensor when absent; another rank is refused.
torch::Tensor input(const std::map<std::string, torch::Tensor>& inputs, const std::string& name, int64_t rank,
                    const torch::Device& device) {
  auto it = inputs.find(name);
  if (it == inputs.end()) return {};
  if (it->second.dim() != rank)
    throw std::invalid_argument("module input '" + name + "': " + std::to_string(rank) + " dimensions expected, got " +
                                std::to_string(it->second.dim()));
  return it->second.to(device);
}

}  // namespace

std::map<std::string, torch::Tensor> fluxModuleOutputs(models::FluxTransformer* transformer, models::FluxAutoencoder* ae,
                                                       models::T5Encoder* t5,
                                                       const std::map<std::string, torch::Tensor>& inputs) {
  torch::NoGradGuard noGrad;
  std::map<std::string, torch::Tensor> out;
  if (transformer && *transformer) {
    const torch::Tensor weight = (*transformer)->img_in->weight;
    const torch::Device device = weight.device();
    const torch::Tensor img = input(inputs, "img", 3, device), imgIds = input(inputs, "img_ids", 3, device),
                        txt = input(inputs, "txt", 3, device), txtIds = input(inputs, "txt_ids", 3, device),
                        timesteps = input(inputs, "timesteps", 1, device), y = input(inputs, "y", 2, device),
                        guidance = input(inputs, "guidance", 1, device);
    if (img.defined() && imgIds.defined() && txt.defined() && txtIds.defined() && timesteps.defined() && y.defined()) {
      const torch::Dtype dtype = weight.scalar_type();
      out["flux"] = (*transformer)(img.to(dtype), imgIds, txt.to(dtype), txtIds, timesteps, y.to(dtype), guidance).contiguous();
    }
  }
  if (ae && *ae) {
    const torch::Tensor weight = (*ae)->encoder->conv_in->weight;
    const torch::Tensor images = input(inputs, "images", 4, weight.device());
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
    const torch::Tensor ids = input(inputs, "t5_ids", 2, device), mask = input(inputs, "t5_mask", 2, device);
    if (ids.defined()) out["t5"] = (*t5)(ids.to(torch::kLong), mask).contiguous();
  }
  return out;
}

}  // namespace sinter::runner
