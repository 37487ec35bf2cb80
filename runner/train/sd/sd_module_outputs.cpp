#include "train/sd/sd_module_outputs.h"

#include <stdexcept>

#include <spdlog/spdlog.h>

#include "core/value.h"
#include "models/text_encoders/sd_text_encoding.h"
#include "models/text_encoders/sdxl_text_encoding.h"
#include "text/bundled_tokenizers.h"
#include "text/clip_token_chunks.h"
#include "train/base/device_info.h"
#include "train/base/module_inputs.h"
#include "train/methods/embedding_on_encoders.h"
#include "train/sd/sd_family.h"

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

ModuleOutputs sdModuleOutputsTool(const Config& config, const ModuleInputs& inputs, const torch::Device& device) {
  ModuleOutputs out;
  const std::string checkpoint = config.getString("pretrained_model_name_or_path");
  if (checkpoint.empty()) {
    out.missing = "--pretrained_model_name_or_path (an SD 1.x/2.x single-file checkpoint)";
    return out;
  }
  models::SdCheckpoint models = models::loadSdCheckpoint(checkpoint);
  for (torch::nn::Module* m : {static_cast<torch::nn::Module*>(models.unet.get()), &models.textEncoder()}) {
    m->to(device, torch::kFloat32);
    m->eval();
  }
  out.metadata = {{"checkpoint", checkpoint}};
  std::map<std::string, torch::Tensor> tensors = inputs.tensors;
  const models::SdVersion version = models.config.version;
  addEmbeddingAndPrompt(
      config, inputs, [&](text::ClipTokenizer& tokenizer) { return sdEmbeddingTargets(tokenizer, models); },
      [version](const text::ClipTokenizer& tokenizer, const std::string& prompt, int maxTokenLength) {
        const torch::Tensor ids =
            models::tokenChunksTensor({text::clipTokenChunks(tokenizer, prompt, sdTextPadding(version), maxTokenLength)});
        return std::vector<std::pair<std::string, torch::Tensor>>{{"input_ids", ids.flatten(0, 1)}};
      },
      tensors, out);
  spdlog::info("running the models of {} on {} in fp32", checkpoint, describeDevice(device));
  for (auto& [name, tensor] : sdModuleOutputs(models, tensors)) out.tensors.emplace_back(name, tensor.cpu());
  out.inputNames = "x, timesteps, context; input_ids";
  return out;
}

}  // namespace sinter::train
