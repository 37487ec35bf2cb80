#include "train/sd/sd_module_outputs.h"

#include <stdexcept>

#include "models/sd_text_encoding.h"
#include "train/base/module_inputs.h"

namespace sinter::train {

std::map<std::string, torch::Tensor> sdModuleOutputs(models::SdCheckpoint& models, const std::map<std::string, torch::Tensor>& inputs) {
  torch::NoGradGuard noGrad;
  const torch::Tensor weight = models.unet->parameters().front();
  const torch::Device device = weight.device();
  const torch::Dtype dtype = weight.scalar_type();
  std::map<std::string, torch::Tensor> out;

  const torch::Tensor x = moduleInput(inputs, "x", 4, device), timesteps = moduleInput(inputs, "timesteps", 1, device),
                      context = moduleInput(inputs, "context", 3, device);
  if (x.defined() && timesteps.defined() && context.defined()) {
    const auto& config = models.unet->config();
    if (x.size(1) != config.inChannels || context.size(2) != config.contextDim)
      throw std::invalid_argument("module inputs 'x' and 'context' must have " + std::to_string(config.inChannels) + " and " +
                                  std::to_string(config.contextDim) + " channels");
    out["unet"] = models.unet->forward(x.to(dtype), timesteps, context.to(dtype), torch::Tensor());
  }

  const torch::Tensor ids = moduleInput(inputs, "input_ids", 2, device);
  if (ids.defined()) {
    if (ids.is_floating_point()) throw std::invalid_argument("module input 'input_ids': integer token ids expected");
    for (int skip : {1, 2}) {
      const int64_t layers = models::sdTextLayersToRun(models.config.version, models.config.text.layers, skip);
      out["text_clip_skip" + std::to_string(skip)] = models::encodeSdText(models.textTransformer(), ids.unsqueeze(1), layers);
    }
  }
  for (auto& [name, t] : out) t = t.contiguous();
  return out;
}

}  // namespace sinter::train
