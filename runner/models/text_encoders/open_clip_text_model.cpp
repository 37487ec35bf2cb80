#include "models/text_encoders/open_clip_text_model.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"

namespace sinter::models {

namespace {

const char* const kModelName = "SDXL OpenCLIP bigG text encoder";

std::string shapeText(const std::vector<int64_t>& shape) { return c10::str(c10::IntArrayRef(shape)); }

}  // namespace

const std::vector<OpenClipBlockTensor>& openClipBlockTensors() {
  static const std::vector<OpenClipBlockTensor> table = {
      {"ln_1", {"layer_norm1"}, "."},
      {"attn.in_proj", {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"}, "_"},
      {"attn.out_proj", {"self_attn.out_proj"}, "."},
      {"ln_2", {"layer_norm2"}, "."},
      {"mlp.c_fc", {"mlp.fc1"}, "."},
      {"mlp.c_proj", {"mlp.fc2"}, "."},
  };
  return table;
}

OpenClipTextModelImpl::OpenClipTextModelImpl(const ClipTextConfig& config) : config_(config) {
  if (config.projectionDim <= 0) {
    throw std::invalid_argument("OpenCLIP text encoder config: projectionDim must be positive");
  }
  text_model = register_module("text_model", ClipTextTransformer(config));
  // OpenCLIP's initialisation: normal with std width^-0.5.
  text_projection = register_parameter(
      "text_projection",
      torch::randn({config.width, config.projectionDim}) * (1.0 / std::sqrt(static_cast<double>(config.width))));
}

ClipTextConfig OpenClipTextModelImpl::inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const auto tokenShape = requireShape(file, prefix, "token_embedding.weight", kModelName);
  const auto positionShape = requireShape(file, prefix, "positional_embedding", kModelName);
  const auto fcShape = requireShape(file, prefix, "transformer.resblocks.0.mlp.c_fc.weight", kModelName);
  const auto projectionShape = requireShape(file, prefix, "text_projection", kModelName);
  if (tokenShape.size() != 2 || positionShape.size() != 2 || fcShape.size() != 2 || projectionShape.size() != 2) {
    throw CheckpointError(file.path() + ": the " + kModelName + " tensors under \"" + prefix + "\" are not matrices");
  }
  ClipTextConfig config = ClipTextConfig::sdxlOpenClipBigG();
  config.vocabSize = tokenShape[0];
  config.width = tokenShape[1];
  config.maxPositions = positionShape[0];
  config.mlpWidth = fcShape[0];
  config.projectionDim = projectionShape[1];
  config.layers = 0;
  while (file.has(prefix + "transformer.resblocks." + std::to_string(config.layers) + ".ln_1.weight")) ++config.layers;
  try {
    config.heads = ClipTextConfig::headsForWidth(config.width);
    config.validate();
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(file.path() + ": " + kModelName + " under \"" + prefix + "\": " + e.what());
  }
  return config;
}

std::vector<OpenClipTextModelImpl::CheckpointEntry> OpenClipTextModelImpl::checkpointLayout() const {
  const auto params = text_model->named_parameters(true);
  auto p = [&](const std::string& name) { return params[name]; };
  std::vector<CheckpointEntry> layout;
  layout.push_back({"token_embedding.weight", {p("embeddings.token_embedding.weight")}});
  layout.push_back({"positional_embedding", {p("embeddings.position_embedding.weight")}});
  for (int64_t i = 0; i < config_.layers; ++i) {
    const std::string block = "transformer.resblocks." + std::to_string(i) + ".";
    const std::string layer = "encoder.layers." + std::to_string(i) + ".";
    for (const char* kind : {"weight", "bias"}) {
      for (const OpenClipBlockTensor& t : openClipBlockTensors()) {
        std::vector<torch::Tensor> parts;
        for (const char* hf : t.huggingFace) parts.push_back(p(layer + hf + "." + kind));
        layout.push_back({block + t.openClip + t.separator + kind, parts});
      }
    }
  }
  layout.push_back({"ln_final.weight", {p("final_layer_norm.weight")}});
  layout.push_back({"ln_final.bias", {p("final_layer_norm.bias")}});
  layout.push_back({"text_projection", {text_projection}});
  return layout;
}

void OpenClipTextModelImpl::loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::vector<CheckpointEntry> layout = checkpointLayout();
  std::vector<std::string> missing, misshapen, wrongDtype;
  for (const CheckpointEntry& entry : layout) {
    std::vector<int64_t> expected = entry.parts.front().sizes().vec();
    for (std::size_t i = 1; i < entry.parts.size(); ++i) expected[0] += entry.parts[i].size(0);
    const std::string key = prefix + entry.key;
    if (!file.has(key)) {
      missing.push_back(key);
    } else if (file.info(key).shape != expected) {
      misshapen.push_back(key + " is " + shapeText(file.info(key).shape) + ", expected " + shapeText(expected));
    } else if (!io::safetensorsDtypeToTorch(file.info(key).dtype)) {
      misshapen.push_back(key + " has dtype " + file.info(key).dtype + ", which this libtorch cannot read");
    } else if (std::string refusal = dtypeRefusal(key, file.info(key).dtype, entry.parts.front()); !refusal.empty()) {
      wrongDtype.push_back(refusal);
    }
  }
  if (!missing.empty() || !misshapen.empty() || !wrongDtype.empty()) {
    std::ostringstream out;
    out << file.path() << ": does not hold the " << kModelName << " expected under \"" << prefix << "\"";
    const std::string family = describeCheckpointFamily(file);
    if (!family.empty()) out << "; " << family;
    constexpr std::size_t kListed = 20;
    auto list = [&](const std::vector<std::string>& items, const char* what) {
      if (items.empty()) return;
      out << "\n  " << items.size() << " " << what << ":";
      for (std::size_t i = 0; i < items.size() && i < kListed; ++i) out << "\n    " << items[i];
      if (items.size() > kListed) out << "\n    ... and " << items.size() - kListed << " more";
    };
    list(missing, "missing key(s)");
    list(misshapen, "wrong shape(s)");
    list(wrongDtype, "wrong dtype(s)");
    throw CheckpointError(out.str());
  }
  torch::NoGradGuard noGrad;
  for (const CheckpointEntry& entry : layout) {
    const torch::Tensor stored = file.tensor(prefix + entry.key);
    int64_t offset = 0;
    for (const torch::Tensor& part : entry.parts) {
      part.copy_(stored.narrow(0, offset, part.size(0)));
      offset += part.size(0);
    }
  }
}

std::vector<std::pair<std::string, torch::Tensor>> OpenClipTextModelImpl::checkpointTensors(
    const std::string& prefix) const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const CheckpointEntry& entry : checkpointLayout()) {
    if (entry.parts.size() == 1) {
      out.emplace_back(prefix + entry.key, entry.parts.front());
    } else {
      std::vector<torch::Tensor> detached;
      for (const torch::Tensor& part : entry.parts) detached.push_back(part.detach());
      out.emplace_back(prefix + entry.key, torch::cat(detached, 0));
    }
  }
  return out;
}

torch::Tensor OpenClipTextModelImpl::project(const torch::Tensor& pooledHidden) const {
  return torch::matmul(pooledHidden, text_projection.to(pooledHidden.scalar_type()));
}

OpenClipTextOutput OpenClipTextModelImpl::forward(const torch::Tensor& ids) {
  ClipTextOutput hidden = text_model->forward(ids);
  // The first <|endoftext|>, the vocabulary's last id, as sd-scripts' pool_workaround finds it (the
  // highest id no longer is once textual inversion adds tokens after it); 0 where there is none.
  const torch::Tensor eosPositions = ids.eq(config_.vocabSize - 1).to(torch::kInt).argmax(-1);
  const torch::Tensor rows = torch::arange(ids.size(0), eosPositions.options());
  OpenClipTextOutput out;
  out.penultimateHiddenState = hidden.hiddenStates[config_.layers - 1];
  out.pooled = project(hidden.lastHiddenState.index({rows, eosPositions}));
  return out;
}

}  // namespace sinter::models
