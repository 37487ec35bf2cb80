#pragma once
// SDXL's second text encoder, OpenCLIP ViT-bigG/14, stored in OpenCLIP's layout under
// conditioner.embedders.1.model. (token_embedding, positional_embedding,
// transformer.resblocks.N.{ln_1, attn.in_proj_weight/in_proj_bias, attn.out_proj, ln_2, mlp.c_fc,
// mlp.c_proj}, ln_final, text_projection).
//
// Inside, it is the Hugging Face CLIPTextModelWithProjection layout (models/text_encoders/clip_text_model.h)
// with separate q/k/v Linears, because sd-scripts names bigG's LoRA modules that way
// (lora_te2_text_model_encoder_layers_N_self_attn_q_proj). Loading slices the fused in_proj into
// q, k, v (in that order); checkpointTensors writes them back fused.
//
//   penultimate = hidden_states[-2]                      (no final layer norm)
//   pooled      = ln_final(last)[eos position] @ text_projection
// where the eos position is argmax(ids) (<|endoftext|> has the highest id), as OpenCLIP pools.
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "models/text_encoders/clip_text_model.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

// A resblock's tensors in OpenCLIP's names and the Hugging Face CLIP modules they hold, one table
// for loading, saving and the LoRA tools: "attn.in_proj" holds q, k and v stacked by rows, and its
// tensors are "in_proj_weight" / "in_proj_bias" where the others have ".weight" / ".bias".
struct OpenClipBlockTensor {
  const char* openClip;                      // under transformer.resblocks.N.
  std::vector<const char*> huggingFace;      // under text_model.encoder.layers.N.
  const char* separator;                     // before "weight" / "bias": "." or "_"
};
const std::vector<OpenClipBlockTensor>& openClipBlockTensors();

struct OpenClipTextOutput {
  torch::Tensor penultimateHiddenState;  // [B, T, width]
  torch::Tensor pooled;                  // [B, projectionDim]
};

class OpenClipTextModelImpl : public torch::nn::Module {
 public:
  static constexpr const char* kSdxlPrefix = "conditioner.embedders.1.model.";

  // config.projectionDim must be > 0 (ClipTextConfig::sdxlOpenClipBigG() or tinyOpenClipBigG()).
  explicit OpenClipTextModelImpl(const ClipTextConfig& config);

  static ClipTextConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);
  // Throws CheckpointError (models/checkpoints/checkpoint_tensors.h) listing every missing or misshapen key.
  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);
  // In the checkpoint's OpenCLIP layout: q, k, v fused into in_proj_weight / in_proj_bias.
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors(const std::string& prefix) const;

  OpenClipTextOutput forward(const torch::Tensor& ids);
  // The full Hugging Face outputs, for callers that need other layers.
  ClipTextOutput hiddenStates(const torch::Tensor& ids) { return text_model->forward(ids); }
  torch::Tensor project(const torch::Tensor& pooledHidden) const;  // x @ text_projection

  const ClipTextConfig& config() const { return config_; }
  ClipTextTransformer& textModel() { return text_model; }
  torch::Tensor textProjection() const { return text_projection; }

 private:
  // One checkpoint tensor and the module tensors it holds, concatenated along dim 0.
  struct CheckpointEntry {
    std::string key;                   // after the prefix, OpenCLIP layout
    std::vector<torch::Tensor> parts;  // module tensors (one, or q/k/v)
  };
  std::vector<CheckpointEntry> checkpointLayout() const;

  ClipTextConfig config_;
  ClipTextTransformer text_model{nullptr};
  torch::Tensor text_projection;  // [width, projectionDim], a bare matrix: pooled = x @ W
};
TORCH_MODULE(OpenClipTextModel);

}  // namespace sinter::models
