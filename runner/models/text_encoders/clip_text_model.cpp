#include "models/text_encoders/clip_text_model.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/layers/gradient_checkpoint.h"

namespace sinter::models {

namespace F = torch::nn::functional;

// ---- config ----------------------------------------------------------------------------------

ClipTextConfig ClipTextConfig::sdxlClipL() { return ClipTextConfig{}; }

ClipTextConfig ClipTextConfig::sdxlOpenClipBigG() {
  ClipTextConfig c;
  c.width = 1280;
  c.layers = 32;
  c.heads = 20;
  c.mlpWidth = 5120;
  c.activation = ClipActivation::Gelu;
  c.projectionDim = 1280;
  return c;
}

ClipTextConfig ClipTextConfig::sd3ClipL() {
  ClipTextConfig c = sdxlClipL();
  c.projectionDim = 768;
  return c;
}

ClipTextConfig ClipTextConfig::sd3ClipG() { return sdxlOpenClipBigG(); }  // gelu, projection 1280

ClipTextConfig ClipTextConfig::tinySd3ClipL() {
  ClipTextConfig c = tinyClipL();
  c.width = 16;
  c.heads = headsForWidth(16);
  c.mlpWidth = 32;
  c.projectionDim = 16;
  return c;
}

ClipTextConfig ClipTextConfig::tinySd3ClipG() {
  ClipTextConfig c = tinyOpenClipBigG();
  c.width = 16;
  c.heads = headsForWidth(16);
  c.mlpWidth = 64;
  c.projectionDim = 16;
  return c;
}

ClipTextConfig ClipTextConfig::tinyClipL() {
  ClipTextConfig c;
  c.width = 32;
  c.layers = 2;
  c.heads = headsForWidth(32);
  c.mlpWidth = 64;
  return c;
}

ClipTextConfig ClipTextConfig::tinyOpenClipBigG() {
  ClipTextConfig c = sdxlOpenClipBigG();
  c.width = 32;
  c.layers = 3;
  c.heads = headsForWidth(32);
  c.mlpWidth = 128;
  c.projectionDim = 32;
  return c;
}

int64_t ClipTextConfig::headsForWidth(int64_t width) {
  const int64_t headWidth = width >= 64 ? 64 : 16;
  if (width <= 0 || width % headWidth != 0) {
    throw std::invalid_argument("CLIP text encoder width " + std::to_string(width) + " is not a multiple of its head width " +
                                std::to_string(headWidth));
  }
  return width / headWidth;
}

void ClipTextConfig::validate() const {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("CLIP text encoder config: " + what);
  };
  require(vocabSize > 0 && maxPositions > 0 && width > 0 && layers > 0 && mlpWidth > 0 && projectionDim >= 0,
          "sizes must be positive");
  require(heads > 0 && width % heads == 0,
          "width " + std::to_string(width) + " is not divisible by " + std::to_string(heads) + " heads");
}

bool ClipTextConfig::operator==(const ClipTextConfig& o) const {
  return vocabSize == o.vocabSize && maxPositions == o.maxPositions && width == o.width && layers == o.layers &&
         heads == o.heads && mlpWidth == o.mlpWidth && activation == o.activation && projectionDim == o.projectionDim &&
         layerNormEps == o.layerNormEps;
}

// ---- encoder layer ---------------------------------------------------------------------------

ClipEncoderLayerImpl::ClipEncoderLayerImpl(const ClipTextConfig& config)
    : heads_(config.heads), activation_(config.activation) {
  const int64_t w = config.width;
  // Registered in Hugging Face's order (k, v, q, out), so module listings match sd-scripts'.
  self_attn = register_module("self_attn", std::make_shared<AttentionModule>());
  self_attn->k_proj = self_attn->register_module("k_proj", Linear(w, w));
  self_attn->v_proj = self_attn->register_module("v_proj", Linear(w, w));
  self_attn->q_proj = self_attn->register_module("q_proj", Linear(w, w));
  self_attn->out_proj = self_attn->register_module("out_proj", Linear(w, w));
  layer_norm1 = register_module("layer_norm1",
                                torch::nn::LayerNorm(torch::nn::LayerNormOptions({w}).eps(config.layerNormEps)));
  mlp = register_module("mlp", std::make_shared<MlpModule>());
  mlp->fc1 = mlp->register_module("fc1", Linear(w, config.mlpWidth));
  mlp->fc2 = mlp->register_module("fc2", Linear(config.mlpWidth, w));
  layer_norm2 = register_module("layer_norm2",
                                torch::nn::LayerNorm(torch::nn::LayerNormOptions({w}).eps(config.layerNormEps)));
}

torch::Tensor ClipEncoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& causalMask, const torch::Tensor& allowed) {
  const int64_t batch = x.size(0), tokens = x.size(1), width = x.size(2), headWidth = width / heads_;
  auto splitHeads = [&](const torch::Tensor& t) { return t.view({batch, tokens, heads_, headWidth}).transpose(1, 2); };

  torch::Tensor h = layer_norm1(x);
  const torch::Tensor q = splitHeads(self_attn->q_proj(h));
  const torch::Tensor k = splitHeads(self_attn->k_proj(h));
  const torch::Tensor v = splitHeads(self_attn->v_proj(h));
  // softmax(q k^T / sqrt(d) with later positions masked out) v
#if TORCH_VERSION_MAJOR >= 2
  (void)causalMask;  // the fused kernel applies the causal mask itself
  torch::Tensor attended = allowed.defined() ? at::scaled_dot_product_attention(q, k, v, allowed, 0.0, /*is_causal=*/false)
                                             : at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
#else
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(headWidth)));
  scores = scores.masked_fill(causalMask, -std::numeric_limits<float>::infinity());
  if (allowed.defined()) scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<float>::infinity());
  torch::Tensor attended = torch::matmul(torch::softmax(scores, -1), v);
#endif
  attended = attended.transpose(1, 2).reshape({batch, tokens, width});
  torch::Tensor out = x + self_attn->out_proj(attended);

  h = mlp->fc1(layer_norm2(out));
  h = activation_ == ClipActivation::QuickGelu ? h * torch::sigmoid(1.702 * h) : F::gelu(h);
  return out + mlp->fc2(h);
}

// ---- text transformer ------------------------------------------------------------------------

ClipTextTransformerImpl::ClipTextTransformerImpl(const ClipTextConfig& config) : config_(config) {
  config.validate();
  embeddings = register_module("embeddings", std::make_shared<EmbeddingsModule>());
  embeddings->token_embedding =
      embeddings->register_module("token_embedding", torch::nn::Embedding(config.vocabSize, config.width));
  embeddings->position_embedding =
      embeddings->register_module("position_embedding", torch::nn::Embedding(config.maxPositions, config.width));
  // CLIP's initialisation of the embeddings (std 0.02 tokens, 0.01 positions).
  torch::NoGradGuard noGrad;
  embeddings->token_embedding->weight.normal_(0.0, 0.02);
  embeddings->position_embedding->weight.normal_(0.0, 0.01);

  encoder = register_module("encoder", std::make_shared<torch::nn::Module>());
  auto layers = encoder->register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.layers; ++i) {
    encoderLayers_.push_back(ClipEncoderLayer(config));
    layers->push_back(encoderLayers_.back());
  }
  final_layer_norm = register_module(
      "final_layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.width}).eps(config.layerNormEps)));
}

torch::Tensor ClipTextTransformerImpl::addedTokenEmbeddings() const {
  if (addedTokens_.empty() || !addedTokens_.front().defined()) return {};
  return addedTokens_.size() == 1 ? addedTokens_.front() : torch::cat(addedTokens_, 0);
}

torch::Tensor ClipTextTransformerImpl::embedTokens(const torch::Tensor& ids) {
  const torch::Tensor addedRows = addedTokenEmbeddings();
  if (!addedRows.defined()) return embeddings->token_embedding(ids);
  // The table's rows for its ids, the added rows for the others (device work only: no host read).
  const torch::Tensor& table = embeddings->token_embedding->weight;
  const int64_t vocabulary = table.size(0);
  const torch::Tensor added = ids.ge(vocabulary);
  const torch::Tensor fromTable = embeddings->token_embedding(ids.clamp_max(vocabulary - 1));
  const torch::Tensor rows = addedRows.to(table.device(), table.scalar_type());
  const torch::Tensor fromAdded =
      rows.index_select(0, (ids - vocabulary).clamp(0, rows.size(0) - 1).flatten()).view(fromTable.sizes());
  return torch::where(added.unsqueeze(-1), fromAdded, fromTable);
}

ClipTextOutput ClipTextTransformerImpl::forward(const torch::Tensor& ids, int64_t layersToRun, const torch::Tensor& attentionMask) {
  TORCH_CHECK(ids.dim() == 2, "CLIP text encoder: token ids must be [batch, tokens], got ", ids.sizes());
  const int64_t tokens = ids.size(1);
  TORCH_CHECK(tokens >= 1 && tokens <= config_.maxPositions, "CLIP text encoder: ", tokens,
              " tokens, the model has ", config_.maxPositions, " positions");
  if (layersToRun < 0) layersToRun = config_.layers;
  TORCH_CHECK(layersToRun <= config_.layers, "CLIP text encoder: asked for ", layersToRun, " layers of ",
              config_.layers);

  const torch::Tensor positions = embeddings->position_embedding->weight.narrow(0, 0, tokens);
  torch::Tensor x = embedTokens(ids.to(torch::kLong)) + positions;
  // True above the diagonal: a position never attends to the positions after it.
  const torch::Tensor causalMask =
      torch::ones({tokens, tokens}, torch::TensorOptions().dtype(torch::kBool).device(ids.device())).triu(1);
  // With an attention_mask: a query attends to the keys at or before it that are not padding.
  torch::Tensor allowed;
  if (attentionMask.defined()) {
    TORCH_CHECK(attentionMask.sizes() == ids.sizes(), "CLIP text encoder: attention mask ", attentionMask.sizes(),
                " for token ids ", ids.sizes());
    allowed = causalMask.logical_not().view({1, 1, tokens, tokens}) & attentionMask.to(ids.device()).ne(0).view({ids.size(0), 1, 1, tokens});
  }

  ClipTextOutput output;
  output.hiddenStates.reserve(layersToRun + 1);
  output.hiddenStates.push_back(x);
  const bool checkpointed = gradientCheckpointing_ && is_training() && torch::GradMode::is_enabled();
  for (int64_t i = 0; i < layersToRun; ++i) {
    ClipEncoderLayer layer = encoderLayers_[i];
    if (checkpointed) {
      auto block = [layer, causalMask, allowed](const std::vector<torch::Tensor>& in) mutable {
        return layer->forward(in[0], causalMask, allowed);
      };
      x = runCheckpointed(block, {x});
    } else {
      x = layer->forward(x, causalMask, allowed);
    }
    output.hiddenStates.push_back(x);
  }
  if (layersToRun == config_.layers) output.lastHiddenState = final_layer_norm(x);
  return output;
}

// ---- CLIP-L ----------------------------------------------------------------------------------

ClipTextModelImpl::ClipTextModelImpl(const ClipTextConfig& config) : config_(config) {
  text_model = register_module("text_model", ClipTextTransformer(config));
  if (config.projectionDim > 0)
    text_projection = register_module("text_projection", Linear(config.width, config.projectionDim, /*withBias=*/false));
}

ClipTextConfig ClipTextModelImpl::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string model = "CLIP-L text encoder";
  const auto tokenShape = requireShape(file, prefix, "text_model.embeddings.token_embedding.weight", model);
  const auto positionShape = requireShape(file, prefix, "text_model.embeddings.position_embedding.weight", model);
  const auto fc1Shape = requireShape(file, prefix, "text_model.encoder.layers.0.mlp.fc1.weight", model);
  if (tokenShape.size() != 2 || positionShape.size() != 2 || fc1Shape.size() != 2) {
    throw CheckpointError(file.path() + ": the " + model + " embeddings under \"" + prefix + "\" are not matrices");
  }
  ClipTextConfig config;
  config.vocabSize = tokenShape[0];
  config.width = tokenShape[1];
  config.maxPositions = positionShape[0];
  config.mlpWidth = fc1Shape[0];
  config.layers = 0;
  while (file.has(prefix + "text_model.encoder.layers." + std::to_string(config.layers) + ".layer_norm1.weight")) {
    ++config.layers;
  }
  try {
    config.heads = ClipTextConfig::headsForWidth(config.width);
    config.validate();
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(file.path() + ": " + model + " under \"" + prefix + "\": " + e.what());
  }
  return config;
}

void ClipTextModelImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  // The stored layout is the module layout (text_model.embeddings.position_ids, which some files
  // carry, is not a weight and is not read).
  loadModuleFromCheckpoint(*this, file, prefix, "CLIP-L text encoder");
}

std::vector<std::pair<std::string, torch::Tensor>> ClipTextModelImpl::checkpointTensors(const std::string& prefix) const {
  return moduleCheckpointTensors(*this, prefix);
}

torch::Tensor ClipTextModelImpl::penultimateHiddenState(const torch::Tensor& ids) {
  // The last layer's output is not used, so it is not computed.
  return text_model->forward(ids, config_.layers - kSdxlLayersFromEnd).hiddenStates.back();
}

torch::Tensor ClipTextModelImpl::pooledOutput(const torch::Tensor& ids) {
  const torch::Tensor last = text_model->forward(ids).lastHiddenState;
  const torch::Tensor eosPositions = ids.to(torch::kLong).argmax(-1);  // the first <|endoftext|>
  return last.index({torch::arange(ids.size(0), eosPositions.options()), eosPositions});
}

ClipTextModelImpl::ProjectedOutput ClipTextModelImpl::projectedOutput(const torch::Tensor& ids, bool maskPadding) {
  if (!text_projection) throw std::logic_error("ClipTextModel::projectedOutput: this encoder has no text_projection");
  const torch::Tensor eosPositions = ids.to(torch::kLong).argmax(-1);  // the first <|endoftext|>, the highest id
  torch::Tensor attentionMask;
  if (maskPadding)
    attentionMask = torch::arange(ids.size(1), eosPositions.options()).unsqueeze(0).le(eosPositions.unsqueeze(1)).to(torch::kLong);
  const ClipTextOutput out = text_model->forward(ids, -1, attentionMask);
  const torch::Tensor pooled = out.lastHiddenState.index({torch::arange(ids.size(0), eosPositions.options()), eosPositions});
  return {out.hiddenStates.at(out.hiddenStates.size() - 2), text_projection(pooled)};
}

// ---- LoRA listing ----------------------------------------------------------------------------

std::vector<LinearInfo> clipTextLinearLayers(const ClipTextConfig& config) {
  std::vector<LinearInfo> out;
  out.reserve(config.layers * 6);
  for (int64_t i = 0; i < config.layers; ++i) {
    const std::string layer = "text_model.encoder.layers." + std::to_string(i) + ".";
    for (const char* projection : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
      out.push_back({layer + "self_attn." + projection, config.width, config.width, true});
    }
    out.push_back({layer + "mlp.fc1", config.width, config.mlpWidth, true});
    out.push_back({layer + "mlp.fc2", config.mlpWidth, config.width, true});
  }
  return out;
}

}  // namespace sinter::models
