#include "models/text_encoders/t5_encoder.h"

#include <cmath>
#include <limits>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/layers/parameters_from_checkpoint.h"

namespace sinter::models {

T5EncoderConfig T5EncoderConfig::xxl() { return T5EncoderConfig{}; }

T5EncoderConfig T5EncoderConfig::tiny() {
  T5EncoderConfig c;
  c.vocabSize = 64;
  c.dModel = 32;
  c.dKv = 8;
  c.dFf = 48;
  c.layers = 2;
  c.heads = 4;
  c.relativeBuckets = 8;
  c.relativeMaxDistance = 16;
  return c;
}

T5EncoderConfig T5EncoderConfig::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string model = "T5 encoder";
  T5EncoderConfig c;
  const std::string sharedKey = file.has(prefix + "shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
  const std::vector<int64_t> shared = requireShape(file, prefix, sharedKey, model);
  c.vocabSize = shared.at(0);
  c.dModel = shared.at(1);
  const std::vector<int64_t> bias =
      requireShape(file, prefix, "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", model);
  c.relativeBuckets = bias.at(0);
  c.heads = bias.at(1);
  c.dKv = requireShape(file, prefix, "encoder.block.0.layer.0.SelfAttention.q.weight", model).at(0) / c.heads;
  c.dFf = requireShape(file, prefix, "encoder.block.0.layer.1.DenseReluDense.wi_0.weight", model).at(0);
  c.layers = 0;
  while (file.has(prefix + "encoder.block." + std::to_string(c.layers) + ".layer.0.SelfAttention.q.weight")) ++c.layers;
  return c;
}

torch::Tensor t5RelativePositionBucket(const torch::Tensor& relativePosition, int64_t buckets, int64_t maxDistance) {
  const int64_t half = buckets / 2;  // one half per direction; keys after the query take the upper half
  const torch::Tensor upper = (relativePosition > 0).to(torch::kLong) * half;
  const torch::Tensor distance = relativePosition.abs();
  const int64_t exact = half / 2;
  // Beyond `exact`, buckets grow logarithmically up to maxDistance, then stay in the last one.
  const torch::Tensor logarithmic =
      (exact + (torch::log(distance.to(torch::kFloat32) / static_cast<double>(exact)) /
                std::log(static_cast<double>(maxDistance) / static_cast<double>(exact)) * static_cast<double>(half - exact))
                   .to(torch::kLong))
          .clamp_max(half - 1);
  return upper + torch::where(distance < exact, distance, logarithmic);
}

T5LayerNormImpl::T5LayerNormImpl(int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor T5LayerNormImpl::forward(const torch::Tensor& x) {
  const torch::Tensor variance = x.to(torch::kFloat32).pow(2).mean(-1, /*keepdim=*/true);
  torch::Tensor normed = x.to(torch::kFloat32) * torch::rsqrt(variance + eps_);
  if (weight.scalar_type() == torch::kHalf || weight.scalar_type() == torch::kBFloat16) normed = normed.to(weight.scalar_type());
  return weight * normed;
}

T5AttentionImpl::T5AttentionImpl(const T5EncoderConfig& c, bool hasRelativeBias)
    : heads_(c.heads), dKv_(c.dKv), buckets_(c.relativeBuckets), maxDistance_(c.relativeMaxDistance) {
  const int64_t inner = c.heads * c.dKv;
  q = register_module("q", Linear(c.dModel, inner, false));
  k = register_module("k", Linear(c.dModel, inner, false));
  v = register_module("v", Linear(c.dModel, inner, false));
  o = register_module("o", Linear(inner, c.dModel, false));
  if (hasRelativeBias)
    relative_attention_bias = register_module("relative_attention_bias", torch::nn::Embedding(c.relativeBuckets, c.heads));
}

torch::Tensor T5AttentionImpl::relativeBias(int64_t length) const {
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(relative_attention_bias->weight.device());
  const torch::Tensor position = torch::arange(length, longs);
  const torch::Tensor relative = position.view({1, length}) - position.view({length, 1});  // key - query
  const torch::Tensor bucket = t5RelativePositionBucket(relative, buckets_, maxDistance_);
  return torch::embedding(relative_attention_bias->weight, bucket).permute({2, 0, 1}).unsqueeze(0);  // [1, heads, L, L]
}

torch::Tensor T5AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& positionBias) {
  const int64_t b = x.size(0), l = x.size(1);
  auto heads = [&](const torch::Tensor& t) { return t.view({b, l, heads_, dKv_}).transpose(1, 2); };
  const torch::Tensor scores = torch::matmul(heads(q(x)), heads(k(x)).transpose(-1, -2)) + positionBias;
  // Softmax in float32, as T5 computes it, back in the activations' dtype.
  const torch::Tensor weights = torch::softmax(scores.to(torch::kFloat32), -1).to(x.scalar_type());
  return o(torch::matmul(weights, heads(v(x))).transpose(1, 2).reshape({b, l, heads_ * dKv_}));
}

T5LayerSelfAttentionImpl::T5LayerSelfAttentionImpl(const T5EncoderConfig& c, bool hasRelativeBias) {
  SelfAttention = register_module("SelfAttention", T5Attention(c, hasRelativeBias));
  layer_norm = register_module("layer_norm", T5LayerNorm(c.dModel, c.layerNormEps));
}

torch::Tensor T5LayerSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& positionBias) {
  return x + SelfAttention(layer_norm(x), positionBias);
}

T5DenseGatedActDenseImpl::T5DenseGatedActDenseImpl(const T5EncoderConfig& c) {
  wi_0 = register_module("wi_0", Linear(c.dModel, c.dFf, false));
  wi_1 = register_module("wi_1", Linear(c.dModel, c.dFf, false));
  wo = register_module("wo", Linear(c.dFf, c.dModel, false));
}

torch::Tensor T5DenseGatedActDenseImpl::forward(const torch::Tensor& h) {
  return wo(torch::gelu(wi_0(h), "tanh") * wi_1(h));
}

T5LayerFFImpl::T5LayerFFImpl(const T5EncoderConfig& c) {
  DenseReluDense = register_module("DenseReluDense", T5DenseGatedActDense(c));
  layer_norm = register_module("layer_norm", T5LayerNorm(c.dModel, c.layerNormEps));
}

torch::Tensor T5LayerFFImpl::forward(const torch::Tensor& x) { return x + DenseReluDense(layer_norm(x)); }

namespace {

// fp16 activations of T5 v1.1 overflow: clamped below the largest half, as T5 does.
torch::Tensor clampHalf(const torch::Tensor& x) {
  if (x.scalar_type() != torch::kHalf) return x;
  const double limit = 65504.0 - 1000.0;
  return x.clamp(-limit, limit);
}

}  // namespace

T5EncoderImpl::T5EncoderImpl(const T5EncoderConfig& config) : config_(config) {
  shared = register_module("shared", torch::nn::Embedding(config.vocabSize, config.dModel));
  auto encoder = register_module("encoder", std::make_shared<torch::nn::Module>());
  auto blocks = encoder->register_module("block", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.layers; ++i) {
    auto block = std::make_shared<torch::nn::Module>();
    auto layers = block->register_module("layer", torch::nn::ModuleList());
    T5LayerSelfAttention attention(config, /*hasRelativeBias=*/i == 0);
    T5LayerFF ff(config);
    layers->push_back(attention);
    layers->push_back(ff);
    blocks->push_back(block);
    blocks_.emplace_back(attention, ff);
  }
  final_layer_norm = encoder->register_module("final_layer_norm", T5LayerNorm(config.dModel, config.layerNormEps));
}

torch::Tensor T5EncoderImpl::forward(const torch::Tensor& ids, const torch::Tensor& mask) {
  torch::Tensor h = shared(ids);
  const int64_t length = ids.size(1);
  // Block 0's relative bias serves every block; padding keys get the dtype's lowest value.
  torch::Tensor positionBias = blocks_.front().first->SelfAttention->relativeBias(length).to(h.scalar_type());
  if (mask.defined()) {
    const double lowest = h.scalar_type() == torch::kHalf       ? -65504.0
                          : h.scalar_type() == torch::kBFloat16 ? -3.3895313892515355e38
                                                                : static_cast<double>(std::numeric_limits<float>::lowest());
    const torch::Tensor padding = (1.0 - mask.to(h.device(), h.scalar_type())).view({mask.size(0), 1, 1, length}) * lowest;
    positionBias = positionBias + padding;
  }
  for (auto& [attention, ff] : blocks_) {
    h = clampHalf(attention(h, positionBias));
    h = clampHalf(ff(h));
  }
  return final_layer_norm(h);
}

void T5EncoderImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string alias = prefix + "encoder.embed_tokens.weight";
  if (file.has(prefix + "shared.weight") || !file.has(alias)) {
    loadModuleFromCheckpoint(*this, file, prefix, "T5 encoder");
    return;
  }
  // Some files keep the embedding only under its encoder alias: the rest first (which copies
  // nothing when anything is missing), then the embedding.
  torch::nn::Module encoderOnly;
  encoderOnly.register_module("encoder", named_children()["encoder"]);
  loadModuleFromCheckpoint(encoderOnly, file, prefix, "T5 encoder");
  if (requireShape(file, prefix, "encoder.embed_tokens.weight", "T5 encoder") != shared->weight.sizes().vec())
    throw CheckpointError("T5 encoder: " + alias + " is " + c10::str(file.tensor(alias).sizes()) + ", expected " +
                          c10::str(shared->weight.sizes()));
  torch::NoGradGuard noGrad;
  shared->weight.copy_(file.tensor(alias).to(shared->weight.scalar_type()));
}

std::vector<std::pair<std::string, torch::Tensor>> T5EncoderImpl::checkpointTensors() const {
  return moduleCheckpointTensors(*this, "");
}

std::vector<LinearInfo> t5EncoderLinearLayers(const T5EncoderConfig& c) {
  std::vector<LinearInfo> out;
  const int64_t inner = c.heads * c.dKv;
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string block = "encoder.block." + std::to_string(i) + ".";
    for (const char* projection : {"q", "k", "v"}) out.push_back({block + "layer.0.SelfAttention." + projection, c.dModel, inner, false});
    out.push_back({block + "layer.0.SelfAttention.o", inner, c.dModel, false});
    out.push_back({block + "layer.1.DenseReluDense.wi_0", c.dModel, c.dFf, false});
    out.push_back({block + "layer.1.DenseReluDense.wi_1", c.dModel, c.dFf, false});
    out.push_back({block + "layer.1.DenseReluDense.wo", c.dFf, c.dModel, false});
  }
  return out;
}

T5Encoder loadT5Encoder(const io::SafetensorsFile& file, const std::string& prefix, torch::Dtype dtype) {
  const T5EncoderConfig config = T5EncoderConfig::inferFromCheckpoint(file, prefix);
  T5Encoder t5{nullptr};
  {
    const ParametersFromCheckpoint fromFile;  // the file's values overwrite them
    t5 = T5Encoder(config);
  }
  t5->to(dtype);
  t5->loadFromCheckpoint(file, prefix);
  return t5;
}

T5Encoder loadT5Encoder(const std::string& path, torch::Dtype dtype) { return loadT5Encoder(io::SafetensorsFile(path), "", dtype); }

}  // namespace sinter::models
