#pragma once
// The T5 v1.1 encoder FLUX conditions on (t5xxl_fp16.safetensors, as Hugging Face's
// T5EncoderModel names its keys: shared, encoder.block.N.layer.0.SelfAttention.{q,k,v,o},
// block 0's relative_attention_bias, encoder.block.N.layer.1.DenseReluDense.{wi_0,wi_1,wo}, the
// layer norms and encoder.final_layer_norm). Sized by a config, so tests run it tiny.
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "models/layers/linear.h"
#include "models/unet/sdxl_unet_layout.h"  // LinearInfo

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

struct T5EncoderConfig {
  int64_t vocabSize = 32128;
  int64_t dModel = 4096;
  int64_t dKv = 64;  // per head
  int64_t dFf = 10240;
  int64_t layers = 24;
  int64_t heads = 64;
  int64_t relativeBuckets = 32;
  int64_t relativeMaxDistance = 128;
  double layerNormEps = 1e-6;

  static T5EncoderConfig xxl();  // google/t5-v1_1-xxl, FLUX's text encoder 2
  static T5EncoderConfig tiny();
  // Sizes read from a file's shapes under `prefix` (layers counted from encoder.block.N); throws CheckpointError.
  static T5EncoderConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = "");
};

// T5's bidirectional relative position bucket of (key position - query position): half the
// buckets per direction, the first half of those exact, the rest logarithmic up to maxDistance.
torch::Tensor t5RelativePositionBucket(const torch::Tensor& relativePosition, int64_t buckets, int64_t maxDistance);

// T5LayerNorm: x / sqrt(mean(x^2) + eps) * weight, the mean in float32, no centring, no bias.
class T5LayerNormImpl : public torch::nn::Module {
 public:
  T5LayerNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(T5LayerNorm);

// Multi-head self-attention without the 1/sqrt(d) scaling (T5 folds it into its weights).
class T5AttentionImpl : public torch::nn::Module {
 public:
  T5AttentionImpl(const T5EncoderConfig& config, bool hasRelativeBias);
  // positionBias: [1 or B, heads, L, L], the relative bias plus the padding mask.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& positionBias);
  // [1, heads, L, L] from relative_attention_bias (block 0 only).
  torch::Tensor relativeBias(int64_t length) const;
  Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  torch::nn::Embedding relative_attention_bias{nullptr};

 private:
  int64_t heads_, dKv_, buckets_, maxDistance_;
};
TORCH_MODULE(T5Attention);

// layer.0: x + SelfAttention(layer_norm(x))
class T5LayerSelfAttentionImpl : public torch::nn::Module {
 public:
  T5LayerSelfAttentionImpl(const T5EncoderConfig& config, bool hasRelativeBias);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& positionBias);
  T5Attention SelfAttention{nullptr};
  T5LayerNorm layer_norm{nullptr};
};
TORCH_MODULE(T5LayerSelfAttention);

// wo(gelu_tanh(wi_0(h)) * wi_1(h)): T5 v1.1's gated GELU feed-forward.
class T5DenseGatedActDenseImpl : public torch::nn::Module {
 public:
  explicit T5DenseGatedActDenseImpl(const T5EncoderConfig& config);
  torch::Tensor forward(const torch::Tensor& h);
  Linear wi_0{nullptr}, wi_1{nullptr}, wo{nullptr};
};
TORCH_MODULE(T5DenseGatedActDense);

// layer.1: x + DenseReluDense(layer_norm(x))
class T5LayerFFImpl : public torch::nn::Module {
 public:
  explicit T5LayerFFImpl(const T5EncoderConfig& config);
  torch::Tensor forward(const torch::Tensor& x);
  T5DenseGatedActDense DenseReluDense{nullptr};
  T5LayerNorm layer_norm{nullptr};
};
TORCH_MODULE(T5LayerFF);

class T5EncoderImpl : public torch::nn::Module {
 public:
  explicit T5EncoderImpl(const T5EncoderConfig& config);
  // ids: [B, L] int64; mask: [B, L] (1: token, 0: padding) or undefined (every position attends to
  // every other, as sd-scripts encodes without apply_t5_attn_mask). Returns the last hidden state
  // after encoder.final_layer_norm, [B, L, d_model], in the weights' dtype.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask = {});

  const T5EncoderConfig& config() const { return config_; }
  // Every key with its shape (F32, F16, BF16; encoder.embed_tokens.weight accepted for shared.weight);
  // a CheckpointError lists what is missing or misshapen.
  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = "");
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors() const;

  torch::nn::Embedding shared{nullptr};
  T5LayerNorm final_layer_norm{nullptr};  // encoder.final_layer_norm

 private:
  T5EncoderConfig config_;
  std::vector<std::pair<T5LayerSelfAttention, T5LayerFF>> blocks_;
};
TORCH_MODULE(T5Encoder);

// Every Linear of the encoder (module path, in, out; no bias), in module order, from the config
// alone: q, k, v, o, then wi_0, wi_1, wo, per block.
std::vector<LinearInfo> t5EncoderLinearLayers(const T5EncoderConfig& config);

// A T5 encoder sized and loaded from a file (t5xxl_fp16.safetensors), in `dtype`; or from the keys
// under `prefix` of one (an SD 3 checkpoint's text_encoders.t5xxl.transformer.).
T5Encoder loadT5Encoder(const std::string& path, torch::Dtype dtype = torch::kFloat32);
T5Encoder loadT5Encoder(const io::SafetensorsFile& file, const std::string& prefix, torch::Dtype dtype = torch::kFloat32);

}  // namespace sinter::models
