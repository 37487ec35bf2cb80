#pragma once
// The CLIP text transformer in the Hugging Face layout (CLIPTextModel), written once for both of
// SDXL's text encoders:
//  - CLIP-L: the checkpoint stores this layout as is, under conditioner.embedders.0.transformer.
//    (ClipTextModel below);
//  - OpenCLIP bigG: the same network with gelu, stored in OpenCLIP's layout and converted on
//    load (models/text_encoders/open_clip_text_model.h).
// Keeping the HF module names is what gives LoRA its sd-scripts names
// (lora_te1_text_model_encoder_layers_0_self_attn_q_proj, ...).
//
//   x = token_embedding(ids) + position_embedding[:T]
//   per layer: x = x + out_proj(causal_attention(q_proj, k_proj, v_proj of layer_norm1(x)))
//              x = x + fc2(act(fc1(layer_norm2(x))))
//   last_hidden_state = final_layer_norm(x)
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/layers/linear.h"
#include "models/unet/sdxl_unet_layout.h"  // LinearInfo

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

enum class ClipActivation { QuickGelu, Gelu };  // CLIP-L: x * sigmoid(1.702 x); bigG: exact gelu

struct ClipTextConfig {
  int64_t vocabSize = 49408;
  int64_t maxPositions = 77;
  int64_t width = 768;
  int64_t layers = 12;
  int64_t heads = 12;
  int64_t mlpWidth = 3072;
  ClipActivation activation = ClipActivation::QuickGelu;
  int64_t projectionDim = 0;  // bigG's text_projection output (0: no projection)
  double layerNormEps = 1e-5;

  static ClipTextConfig sdxlClipL();       // 768 wide, 12 layers, 12 heads
  static ClipTextConfig sdxlOpenClipBigG();  // 1280 wide, 32 layers, 20 heads, projection 1280
  // Test sizes with the real vocabulary (so real token ids embed): 32 wide, 2 heads, so that the
  // tiny UNet's context (64) and pooled (32) sizes match.
  static ClipTextConfig tinyClipL();
  static ClipTextConfig tinyOpenClipBigG();
  // SD 3's two encoders, both Hugging Face's CLIPTextModelWithProjection: CLIP-L with a 768
  // projection, CLIP-G (bigG's sizes, gelu) with a 1280 one; tiny: 16 wide each, so that the two
  // side by side are the tiny T5's 32 (SD 3 pads CLIP's 768 + 1280 to T5-XXL's 4096).
  static ClipTextConfig sd3ClipL();
  static ClipTextConfig sd3ClipG();
  static ClipTextConfig tinySd3ClipL();
  static ClipTextConfig tinySd3ClipG();

  // Head counts are not visible in tensor shapes: both SDXL encoders use heads 64 wide; test
  // widths below 64 use heads 16 wide. Throws std::invalid_argument for a width that fits neither.
  static int64_t headsForWidth(int64_t width);

  void validate() const;  // throws std::invalid_argument naming the inconsistent size
  bool operator==(const ClipTextConfig& other) const;
};

// All hidden states as Hugging Face's output_hidden_states gives them: [0] the embeddings, [i] the
// output of layer i (no final layer norm), and the final-layer-normed output of the last layer.
struct ClipTextOutput {
  std::vector<torch::Tensor> hiddenStates;  // layersRun + 1 entries, each [B, T, width]
  torch::Tensor lastHiddenState;            // defined only when every layer ran
};

class ClipEncoderLayerImpl : public torch::nn::Module {
 public:
  explicit ClipEncoderLayerImpl(const ClipTextConfig& config);
  // `allowed`, when defined: [B, 1, T, T] true where a query may attend to a key (causal and not
  // padding); undefined: causal alone.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& causalMask, const torch::Tensor& allowed = {});

 private:
  struct AttentionModule : torch::nn::Module {  // "self_attn"
    Linear k_proj{nullptr}, v_proj{nullptr}, q_proj{nullptr}, out_proj{nullptr};
  };
  struct MlpModule : torch::nn::Module {  // "mlp"
    Linear fc1{nullptr}, fc2{nullptr};
  };
  int64_t heads_;
  ClipActivation activation_;
  std::shared_ptr<AttentionModule> self_attn;
  torch::nn::LayerNorm layer_norm1{nullptr};
  std::shared_ptr<MlpModule> mlp;
  torch::nn::LayerNorm layer_norm2{nullptr};
};
TORCH_MODULE(ClipEncoderLayer);

// "text_model": embeddings, encoder.layers, final_layer_norm.
class ClipTextTransformerImpl : public torch::nn::Module {
 public:
  explicit ClipTextTransformerImpl(const ClipTextConfig& config);
  // ids: [B, T] integer token ids, T <= maxPositions. layersToRun < 0: all layers. attentionMask:
  // Hugging Face's attention_mask, [B, T] non-zero for the tokens to attend to (padding keys masked
  // besides the causal mask); undefined: every token.
  ClipTextOutput forward(const torch::Tensor& ids, int64_t layersToRun = -1, const torch::Tensor& attentionMask = {});

  torch::nn::Embedding& tokenEmbedding() { return embeddings->token_embedding; }
  // Textual inversion: the embeddings of the token ids from the table's size on (the tokens added
  // to the tokenizer), [n, width], read for those ids in place of the table (which is unchanged and
  // stays frozen); cast to the table's dtype where they are used, so their gradient reaches them.
  // Undefined: none (ids past the table are then an error).
  void setAddedTokenEmbeddings(torch::Tensor rows) { setAddedTokenEmbeddings(std::vector<torch::Tensor>{std::move(rows)}); }
  // The same rows in parts, in id order, joined where they are used (pivotal tuning: each
  // embedding's rows are their own parameter, with their own learning rate).
  void setAddedTokenEmbeddings(std::vector<torch::Tensor> parts) { addedTokens_ = std::move(parts); }
  torch::Tensor addedTokenEmbeddings() const;
  torch::nn::Embedding& positionEmbedding() { return embeddings->position_embedding; }
  ClipEncoderLayer& layer(int64_t index) { return encoderLayers_.at(index); }
  torch::nn::LayerNorm& finalLayerNorm() { return final_layer_norm; }

  // While training with gradients, each layer's activations are recomputed in the backward pass
  // instead of kept (sd-scripts' gradient_checkpointing for a trained text encoder).
  void setGradientCheckpointing(bool enabled) { gradientCheckpointing_ = enabled; }
  bool gradientCheckpointing() const { return gradientCheckpointing_; }

 private:
  struct EmbeddingsModule : torch::nn::Module {
    torch::nn::Embedding token_embedding{nullptr}, position_embedding{nullptr};
  };
  ClipTextConfig config_;
  std::shared_ptr<EmbeddingsModule> embeddings;
  std::shared_ptr<torch::nn::Module> encoder;  // holds "layers"
  std::vector<ClipEncoderLayer> encoderLayers_;
  torch::nn::LayerNorm final_layer_norm{nullptr};
  bool gradientCheckpointing_ = false;
  std::vector<torch::Tensor> addedTokens_;  // setAddedTokenEmbeddings'; empty or undefined: none
  torch::Tensor embedTokens(const torch::Tensor& ids);
};
TORCH_MODULE(ClipTextTransformer);

// SDXL's first text encoder, CLIP ViT-L/14, as stored under conditioner.embedders.0.transformer.
class ClipTextModelImpl : public torch::nn::Module {
 public:
  static constexpr const char* kSdxlPrefix = "conditioner.embedders.0.transformer.";
  // SDXL conditions on the output of layer 11 of 12 (hidden_states[11]), without final layer norm.
  static constexpr int64_t kSdxlLayersFromEnd = 1;

  explicit ClipTextModelImpl(const ClipTextConfig& config);

  static ClipTextConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);
  // Throws CheckpointError (models/checkpoints/checkpoint_tensors.h) listing every missing or misshapen key.
  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors(const std::string& prefix) const;

  ClipTextOutput forward(const torch::Tensor& ids, int64_t layersToRun = -1) { return text_model->forward(ids, layersToRun); }
  // hidden_states[layers - 1]: what SDXL's UNet is conditioned on. [B, T, width]
  torch::Tensor penultimateHiddenState(const torch::Tensor& ids);
  // Hugging Face's pooler_output: the final-layer-normed state at the first <|endoftext|> (the
  // highest id, so argmax finds it), what FLUX's vector_in is conditioned on. [B, width]
  torch::Tensor pooledOutput(const torch::Tensor& ids);

  // CLIPTextModelWithProjection as SD 3 runs it (strategy_sd3): from one pass, hidden_states[-2]
  // [B, T, width] and text_embeds, text_projection(pooler_output) [B, projectionDim]. Needs
  // config.projectionDim > 0.
  struct ProjectedOutput {
    torch::Tensor penultimate, textEmbeds;
  };
  // maskPadding: sd-scripts' apply_lg_attn_mask, the tokenizer's attention_mask (1 through the first
  // <|endoftext|>, 0 on the padding after it) passed to the encoder.
  ProjectedOutput projectedOutput(const torch::Tensor& ids, bool maskPadding = false);

  const ClipTextConfig& config() const { return config_; }
  ClipTextTransformer& textModel() { return text_model; }

  // With config.projectionDim > 0 (CLIPTextModelWithProjection): text_projection, no bias.
  Linear text_projection{nullptr};

 private:
  ClipTextConfig config_;
  ClipTextTransformer text_model{nullptr};
};
TORCH_MODULE(ClipTextModel);

// The Linear modules of a CLIP text transformer (HF layout paths under the text encoder, e.g.
// text_model.encoder.layers.0.self_attn.q_proj), in module order, from the config alone: what
// sd-scripts' LoRA targets in each SDXL text encoder (the attention and MLP Linears).
std::vector<LinearInfo> clipTextLinearLayers(const ClipTextConfig& config);

}  // namespace sinter::models
