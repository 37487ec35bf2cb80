#include "train/sdxl/sdxl_module_outputs.h"

#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/value.h"
#include "models/text_encoders/sdxl_text_encoding.h"
#include "text/bundled_tokenizers.h"
#include "text/clip_token_chunks.h"
#include "train/base/device_info.h"
#include "train/base/module_inputs.h"
#include "train/methods/embedding_on_encoders.h"
#include "train/sdxl/sdxl_family.h"

namespace sinter::train {

namespace {

void expectSize(const torch::Tensor& t, int64_t dim, int64_t size, const std::string& name) {
  if (t.size(dim) != size)
    throw std::invalid_argument("module input '" + name + "': size " + std::to_string(size) + " expected in dimension " +
                                std::to_string(dim) + ", got " + std::to_string(t.size(dim)));
}

}  // namespace

std::map<std::string, torch::Tensor> sdxlModuleOutputs(SdxlModelSet& models, const std::map<std::string, torch::Tensor>& inputs) {
  torch::NoGradGuard noGrad;
  const torch::Tensor weight = models.unet->parameters().front();
  const torch::Device device = weight.device();
  const torch::Dtype dtype = weight.scalar_type();
  std::map<std::string, torch::Tensor> out;

  const torch::Tensor x = moduleInput(inputs, "x", 4, device), timesteps = moduleInput(inputs, "timesteps", 1, device),
                      context = moduleInput(inputs, "context", 3, device), y = moduleInput(inputs, "y", 2, device);
  if (x.defined() && timesteps.defined() && context.defined() && y.defined()) {
    const auto& config = models.unet->config();
    expectSize(x, 1, config.inChannels, "x");
    expectSize(context, 2, config.contextDim, "context");
    expectSize(y, 1, config.admInChannels, "y");
    out["unet"] = models.unet->forward(x.to(dtype), timesteps, context.to(dtype), y.to(dtype));
  }

  const torch::Tensor images = moduleInput(inputs, "images", 4, device);
  if (images.defined()) {
    expectSize(images, 1, 3, "images");
    const models::LatentDistribution latents = models.vae->encode(images.to(models.vae->parameters().front().scalar_type()));
    out["vae_mean"] = latents.mean;
    out["vae_logvar"] = latents.logvar;
    out["vae_decoded"] = models.vae->decodeLatents(latents.mean * 0.13025);
  }

  const torch::Tensor ids = moduleInput(inputs, "input_ids", 2, device), ids2 = moduleInput(inputs, "input_ids2", 2, device);
  if (ids.defined()) {
    if (ids.is_floating_point()) throw std::invalid_argument("module input 'input_ids': integer token ids expected");
    if (ids2.defined() && (ids2.is_floating_point() || ids2.sizes() != ids.sizes()))
      throw std::invalid_argument("module input 'input_ids2': integer token ids of input_ids' shape expected");
    const models::ClipTextOutput clipL = models.clipL->forward(ids);
    out["clip_l_hidden_last_layer"] = clipL.hiddenStates.back();
    out["clip_l_last"] = clipL.lastHiddenState;
    const models::OpenClipTextOutput bigG = models.bigG->forward(ids2.defined() ? ids2 : ids);
    out["big_g_penultimate"] = bigG.penultimateHiddenState;
    out["big_g_pooled"] = bigG.pooled;
  }
  for (auto& [name, t] : out) t = t.contiguous();
  return out;
}

ModuleOutputs sdxlModuleOutputsTool(const Config& config, const ModuleInputs& inputs, const torch::Device& device) {
  ModuleOutputs out;
  const std::string checkpoint = config.getString("pretrained_model_name_or_path");
  if (checkpoint.empty()) {
    out.missing = "--pretrained_model_name_or_path (an SDXL single-file checkpoint)";
    return out;
  }
  SdxlModelSet models = loadSdxlModelSet(checkpoint, config.getString("vae"));
  models.toDevice(device, torch::kFloat32);
  models.setTraining(false);
  out.metadata = {{"checkpoint", checkpoint}};
  std::map<std::string, torch::Tensor> tensors = inputs.tensors;
  addEmbeddingAndPrompt(
      config, inputs, [&](text::ClipTokenizer& tokenizer) { return sdxlEmbeddingTargets(tokenizer, models); },
      [](const text::ClipTokenizer& tokenizer, const std::string& prompt, int maxTokenLength) {
        const text::SdxlTokenChunks chunks = text::sdxlTokenChunks(tokenizer, prompt, maxTokenLength);
        return std::vector<std::pair<std::string, torch::Tensor>>{
            {"input_ids", models::tokenChunksTensor({chunks.clipL}).flatten(0, 1)},
            {"input_ids2", models::tokenChunksTensor({chunks.bigG}).flatten(0, 1)}};
      },
      tensors, out);
  spdlog::info("running the models of {} on {} in fp32", checkpoint, describeDevice(device));
  for (auto& [name, tensor] : sdxlModuleOutputs(models, tensors)) {
    out.tensors.emplace_back(name, tensor.cpu());
    if (name == "clip_l_last") {  // the text encoders ran on input_ids (checked there)
      torch::NoGradGuard noGrad;
      out.tensors.emplace_back("clip_l_penultimate",
                               models.clipL->penultimateHiddenState(tensors.at("input_ids").to(device)).contiguous().cpu());
    }
  }
  out.inputNames = "x, timesteps, context, y; images; input_ids (input_ids2)";
  return out;
}

}  // namespace sinter::train
