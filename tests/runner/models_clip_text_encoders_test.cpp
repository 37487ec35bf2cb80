// SDXL's text encoders at tiny size on the CPU: CLIP-L and OpenCLIP bigG forward shapes, the
// attention formula, the causal mask, bigG's pooled output at the eos position, checkpoint
// round trips (bigG's fused in_proj sliced on load and fused again on write), the LoRA Linear
// listing, and the merged SDXL conditioning for sd-scripts' max_token_length chunks.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/open_clip_text_model.h"
#include "models/text_encoders/sdxl_text_encoding.h"

namespace fs = std::filesystem;
using namespace sinter::models;
namespace idx = torch::indexing;

namespace {

constexpr int64_t kBos = 49406, kEos = 49407;

// [B, 77] ids: bos, `length` text tokens, eos, then `pad`.
torch::Tensor tokenIds(int64_t batch, int64_t length, int64_t pad, int64_t seed = 0) {
  torch::Tensor ids = torch::full({batch, 77}, pad, torch::kLong);
  ids.index_put_({idx::Slice(), 0}, kBos);
  ids.index_put_({idx::Slice(), idx::Slice(1, 1 + length)},
                 torch::arange(batch * length, torch::kLong).reshape({batch, length}) * 37 + 300 + seed);
  ids.index_put_({idx::Slice(), 1 + length}, kEos);
  return ids;
}

struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& name)
      : path(fs::temp_directory_path() / ("sinter_clip_test_" + name + "_" + std::to_string(::getpid()) + ".safetensors")) {}
  ~TempFile() { fs::remove(path); }
};

bool allClose(const torch::Tensor& a, const torch::Tensor& b) { return torch::allclose(a, b, 1e-5, 1e-5); }

}  // namespace

TEST(ClipTextModel, ForwardShapesAndPenultimate) {
  torch::manual_seed(0);
  const ClipTextConfig config = ClipTextConfig::tinyClipL();
  ClipTextModel model(config);
  const torch::Tensor ids = tokenIds(2, 5, kEos);
  const ClipTextOutput out = model->forward(ids);
  ASSERT_EQ(static_cast<int64_t>(out.hiddenStates.size()), config.layers + 1);
  for (const auto& h : out.hiddenStates) EXPECT_EQ(h.sizes(), (std::vector<int64_t>{2, 77, config.width}));
  ASSERT_TRUE(out.lastHiddenState.defined());
  EXPECT_TRUE(allClose(out.lastHiddenState, model->textModel()->finalLayerNorm()(out.hiddenStates.back())));
  // SDXL's CLIP-L output: hidden_states[layers - 1], no final layer norm.
  EXPECT_TRUE(allClose(model->penultimateHiddenState(ids), out.hiddenStates[config.layers - 1]));
  EXPECT_FALSE(model->forward(ids, config.layers - 1).lastHiddenState.defined());
}

// The layer written out head by head from its parameters by checkpoint name: causal attention over
// the keys `keyAllowed` keeps (all when undefined), then the MLP.
torch::Tensor referenceLayer(ClipEncoderLayer& layer, const ClipTextConfig& config, const torch::Tensor& x,
                             const torch::Tensor& keyAllowed = {}) {
  auto p = layer->named_parameters();
  auto linear = [&](const std::string& name, const torch::Tensor& in) {
    return torch::matmul(in, p[name + ".weight"].t()) + p[name + ".bias"];
  };
  auto layerNorm = [&](const std::string& name, const torch::Tensor& in) {
    const auto mean = in.mean(-1, true);
    const auto var = (in - mean).pow(2).mean(-1, true);
    return (in - mean) / torch::sqrt(var + 1e-5) * p[name + ".weight"] + p[name + ".bias"];
  };
  const int64_t n = x.size(0);
  const torch::Tensor h = layerNorm("layer_norm1", x);
  const torch::Tensor q = linear("self_attn.q_proj", h), k = linear("self_attn.k_proj", h),
                      v = linear("self_attn.v_proj", h);
  const int64_t headWidth = config.width / config.heads;
  std::vector<torch::Tensor> heads;
  for (int64_t head = 0; head < config.heads; ++head) {
    const auto cols = idx::Slice(head * headWidth, (head + 1) * headWidth);
    torch::Tensor scores = torch::matmul(q.index({idx::Slice(), cols}), k.index({idx::Slice(), cols}).t()) /
                           std::sqrt(static_cast<double>(headWidth));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (j > i || (keyAllowed.defined() && !keyAllowed[j].item<bool>())) scores.index_put_({i, j}, -1e30);
    heads.push_back(torch::matmul(torch::softmax(scores, -1), v.index({idx::Slice(), cols})));
  }
  const torch::Tensor afterAttention = x + linear("self_attn.out_proj", torch::cat(heads, 1));
  const torch::Tensor f = linear("mlp.fc1", layerNorm("layer_norm2", afterAttention));
  return afterAttention + linear("mlp.fc2", f * torch::sigmoid(1.702 * f));
}

TEST(ClipTextModel, EncoderLayerIsCausalSelfAttentionThenMlp) {
  torch::manual_seed(1);
  ClipTextConfig config = ClipTextConfig::tinyClipL();
  ClipEncoderLayer layer(config);
  const torch::Tensor x = torch::randn({1, 6, config.width});
  const torch::Tensor mask = torch::ones({6, 6}, torch::kBool).triu(1);
  const torch::Tensor actual = layer->forward(x, mask);
  const torch::Tensor expected = referenceLayer(layer, config, x[0]);
  EXPECT_TRUE(allClose(actual[0], expected)) << (actual[0] - expected).abs().max();
}

TEST(ClipTextModel, EncoderLayerMasksPaddingKeys) {
  // apply_lg_attn_mask: a query attends to the keys at or before it that are not padding (Hugging
  // Face's attention_mask added to the causal mask); rows 4 and 5 are padding here.
  torch::manual_seed(11);
  ClipTextConfig config = ClipTextConfig::tinyClipL();
  ClipEncoderLayer layer(config);
  const torch::Tensor x = torch::randn({1, 6, config.width});
  const torch::Tensor causal = torch::ones({6, 6}, torch::kBool).triu(1);
  const torch::Tensor keyAllowed = torch::tensor({1, 1, 1, 1, 0, 0}).to(torch::kBool);
  const torch::Tensor allowed = causal.logical_not().view({1, 1, 6, 6}) & keyAllowed.view({1, 1, 1, 6});
  const torch::Tensor actual = layer->forward(x, causal, allowed);
  const torch::Tensor expected = referenceLayer(layer, config, x[0], keyAllowed);
  EXPECT_TRUE(allClose(actual[0], expected)) << (actual[0] - expected).abs().max();
  // Padding changes only the padding rows' outputs.
  const torch::Tensor plain = layer->forward(x, causal);
  EXPECT_TRUE(allClose(actual.index({0, idx::Slice(0, 4)}), plain.index({0, idx::Slice(0, 4)})));
  EXPECT_FALSE(allClose(actual.index({0, 4}), plain.index({0, 4})));
  EXPECT_FALSE(allClose(actual.index({0, 5}), plain.index({0, 5})));
}

TEST(ClipTextModel, LaterTokensDoNotChangeEarlierPositions) {
  torch::manual_seed(2);
  for (const ClipTextConfig& config : {ClipTextConfig::tinyClipL(), ClipTextConfig::tinyOpenClipBigG()}) {
    ClipTextTransformer model(config);
    const torch::Tensor ids = tokenIds(1, 10, kEos);
    torch::Tensor changed = ids.clone();
    changed.index_put_({0, 6}, 12345);
    const torch::Tensor a = model->forward(ids).lastHiddenState, b = model->forward(changed).lastHiddenState;
    EXPECT_TRUE(allClose(a.index({0, idx::Slice(0, 6)}), b.index({0, idx::Slice(0, 6)})));
    EXPECT_FALSE(allClose(a.index({0, 6}), b.index({0, 6})));
    EXPECT_FALSE(allClose(a.index({0, 7}), b.index({0, 7})));
  }
}

TEST(ClipTextModel, GradientCheckpointingGivesTheSameGradients) {
  torch::manual_seed(7);
  ClipTextModel model(ClipTextConfig::tinyClipL());
  model->train();
  const torch::Tensor ids = tokenIds(2, 9, kEos);
  auto gradients = [&](bool checkpointing) {
    model->zero_grad();
    model->textModel()->setGradientCheckpointing(checkpointing);
    model->penultimateHiddenState(ids).pow(2).mean().backward();
    std::vector<torch::Tensor> grads;
    for (const auto& p : model->parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    return grads;
  };
  const auto plain = gradients(false), checkpointed = gradients(true);
  ASSERT_EQ(plain.size(), checkpointed.size());
  int compared = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    ASSERT_EQ(plain[i].defined(), checkpointed[i].defined());
    if (!plain[i].defined()) continue;
    EXPECT_TRUE(allClose(plain[i], checkpointed[i]));
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

TEST(ClipTextModel, CheckpointRoundTripAndInferredConfig) {
  torch::manual_seed(3);
  const ClipTextConfig config = ClipTextConfig::tinyClipL();
  ClipTextModel model(config);
  const std::string prefix = ClipTextModelImpl::kSdxlPrefix;
  const auto tensors = model->checkpointTensors(prefix);
  std::set<std::string> keys;
  for (const auto& [key, tensor] : tensors) keys.insert(key);
  EXPECT_TRUE(keys.count(prefix + "text_model.embeddings.token_embedding.weight"));
  EXPECT_TRUE(keys.count(prefix + "text_model.encoder.layers.1.self_attn.q_proj.bias"));
  EXPECT_TRUE(keys.count(prefix + "text_model.final_layer_norm.weight"));
  EXPECT_EQ(keys.size(), 4u + config.layers * 16u);

  TempFile file("clip_l");
  sinter::io::writeSafetensors(file.path.string(), tensors);
  sinter::io::SafetensorsFile reader(file.path.string());
  EXPECT_EQ(ClipTextModelImpl::inferFromCheckpoint(reader, prefix), config);
  ClipTextModel loaded(ClipTextModelImpl::inferFromCheckpoint(reader, prefix));
  loaded->loadFromCheckpoint(reader, prefix);
  const torch::Tensor ids = tokenIds(1, 8, kEos);
  EXPECT_TRUE(torch::equal(loaded->penultimateHiddenState(ids), model->penultimateHiddenState(ids)));
}

// SD 3's CLIPTextModelWithProjection: hidden_states[-2] and text_projection(pooler_output), one pass.
TEST(ClipTextModel, ProjectedOutputAsSd3RunsIt) {
  torch::manual_seed(4);
  ClipTextModel model(ClipTextConfig::tinySd3ClipL());
  std::set<std::string> keys;
  for (const auto& [key, tensor] : model->checkpointTensors("")) keys.insert(key);
  EXPECT_TRUE(keys.count("text_projection.weight"));
  EXPECT_FALSE(keys.count("text_projection.bias"));
  const torch::Tensor ids = tokenIds(2, 8, kEos);
  torch::NoGradGuard noGrad;
  const ClipTextModelImpl::ProjectedOutput out = model->projectedOutput(ids);
  EXPECT_TRUE(torch::allclose(out.penultimate, model->penultimateHiddenState(ids)));
  const torch::Tensor expected = torch::matmul(model->pooledOutput(ids), model->text_projection->weight.t());
  EXPECT_TRUE(torch::allclose(out.textEmbeds, expected, 1e-5, 1e-6));
  EXPECT_EQ(out.textEmbeds.sizes(), (std::vector<int64_t>{2, 16}));
  EXPECT_THROW(ClipTextModel(ClipTextConfig::tinyClipL())->projectedOutput(ids), std::logic_error);
}

TEST(ClipTextModel, ProjectedOutputWithThePaddingMasked) {
  // apply_lg_attn_mask: the mask runs through the first <|endoftext|> (CLIP-G's padding is 0, CLIP-L's
  // is <|endoftext|> itself); causal attention already keeps those positions, so they and the pooled
  // output are unchanged, and a padding position no longer sees the padding before it.
  torch::manual_seed(12);
  const std::vector<std::pair<ClipTextConfig, int64_t>> encoders{{ClipTextConfig::tinySd3ClipL(), kEos}, {ClipTextConfig::tinySd3ClipG(), 0}};
  for (const auto& [config, pad] : encoders) {
    ClipTextModel model(config);
    torch::NoGradGuard noGrad;
    const int64_t eos = 1 + 6;
    const torch::Tensor ids = tokenIds(2, 6, pad);
    const auto plain = model->projectedOutput(ids), masked = model->projectedOutput(ids, true);
    EXPECT_TRUE(allClose(masked.penultimate.index({idx::Slice(), idx::Slice(0, eos + 1)}),
                         plain.penultimate.index({idx::Slice(), idx::Slice(0, eos + 1)})));
    EXPECT_TRUE(allClose(masked.textEmbeds, plain.textEmbeds));
    EXPECT_FALSE(allClose(masked.penultimate.index({idx::Slice(), eos + 3}), plain.penultimate.index({idx::Slice(), eos + 3})));
    // Another token at a padding place: seen from a later padding position only without the mask.
    torch::Tensor changed = ids.clone();
    changed.index_put_({idx::Slice(), eos + 1}, 555);
    const auto plainChanged = model->projectedOutput(changed), maskedChanged = model->projectedOutput(changed, true);
    EXPECT_TRUE(allClose(maskedChanged.penultimate.index({idx::Slice(), eos + 3}), masked.penultimate.index({idx::Slice(), eos + 3})));
    EXPECT_FALSE(allClose(plainChanged.penultimate.index({idx::Slice(), eos + 3}), plain.penultimate.index({idx::Slice(), eos + 3})));
  }
}

TEST(ClipTextModel, LoadReportsMissingAndMisshapenKeys) {
  const std::string prefix = ClipTextModelImpl::kSdxlPrefix;
  ClipTextModel model(ClipTextConfig::tinyClipL());
  auto tensors = model->checkpointTensors(prefix);
  std::vector<std::pair<std::string, torch::Tensor>> damaged;
  for (auto& [key, tensor] : tensors) {
    if (key == prefix + "text_model.encoder.layers.1.mlp.fc2.weight") continue;
    if (key == prefix + "text_model.final_layer_norm.bias") {
      damaged.emplace_back(key, torch::zeros({7}));
      continue;
    }
    damaged.emplace_back(key, tensor);
  }
  TempFile file("clip_l_damaged");
  sinter::io::writeSafetensors(file.path.string(), damaged);
  sinter::io::SafetensorsFile reader(file.path.string());
  try {
    model->loadFromCheckpoint(reader, prefix);
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("missing key(s)"), std::string::npos) << message;
    EXPECT_NE(message.find(prefix + "text_model.encoder.layers.1.mlp.fc2.weight"), std::string::npos) << message;
    EXPECT_NE(message.find("final_layer_norm.bias is [7], expected [32]"), std::string::npos) << message;
  }
  EXPECT_THROW(OpenClipTextModelImpl::inferFromCheckpoint(reader, OpenClipTextModelImpl::kSdxlPrefix), CheckpointError);
}

TEST(OpenClipTextModel, ForwardShapesAndPooledAtEos) {
  torch::manual_seed(4);
  const ClipTextConfig config = ClipTextConfig::tinyOpenClipBigG();
  OpenClipTextModel model(config);
  // Different caption lengths, so each row's eos sits elsewhere; bigG pads with 0.
  torch::Tensor ids = torch::cat({tokenIds(1, 3, 0), tokenIds(1, 20, 0, 7)}, 0);
  const OpenClipTextOutput out = model->forward(ids);
  EXPECT_EQ(out.penultimateHiddenState.sizes(), (std::vector<int64_t>{2, 77, config.width}));
  EXPECT_EQ(out.pooled.sizes(), (std::vector<int64_t>{2, config.projectionDim}));

  const ClipTextOutput hidden = model->hiddenStates(ids);
  EXPECT_TRUE(allClose(out.penultimateHiddenState, hidden.hiddenStates[config.layers - 1]));
  const torch::Tensor w = model->textProjection();
  EXPECT_TRUE(allClose(out.pooled[0], torch::matmul(hidden.lastHiddenState.index({0, 4}), w)));   // eos at 1 + 3
  EXPECT_TRUE(allClose(out.pooled[1], torch::matmul(hidden.lastHiddenState.index({1, 21}), w)));  // eos at 1 + 20

  // Pads after the eos cannot reach it; a token before it does.
  torch::Tensor afterEos = ids.clone(), beforeEos = ids.clone();
  afterEos.index_put_({0, 30}, 999);
  beforeEos.index_put_({0, 2}, 999);
  EXPECT_TRUE(allClose(model->forward(afterEos).pooled, out.pooled));
  EXPECT_FALSE(allClose(model->forward(beforeEos).pooled[0], out.pooled[0]));
}

TEST(OpenClipTextModel, FusedInProjIsSlicedOnLoadAndFusedOnWrite) {
  torch::manual_seed(5);
  const ClipTextConfig config = ClipTextConfig::tinyOpenClipBigG();
  const std::string prefix = OpenClipTextModelImpl::kSdxlPrefix;
  OpenClipTextModel original(config);
  const auto tensors = original->checkpointTensors(prefix);
  std::map<std::string, torch::Tensor> byKey(tensors.begin(), tensors.end());
  const int64_t w = config.width;
  ASSERT_TRUE(byKey.count(prefix + "transformer.resblocks.2.attn.in_proj_weight"));
  EXPECT_EQ(byKey[prefix + "transformer.resblocks.2.attn.in_proj_weight"].sizes(), (std::vector<int64_t>{3 * w, w}));
  EXPECT_EQ(byKey[prefix + "transformer.resblocks.2.attn.in_proj_bias"].sizes(), (std::vector<int64_t>{3 * w}));
  EXPECT_EQ(byKey[prefix + "text_projection"].sizes(), (std::vector<int64_t>{w, config.projectionDim}));
  EXPECT_EQ(byKey[prefix + "positional_embedding"].sizes(), (std::vector<int64_t>{77, w}));
  for (const auto& key : {"token_embedding.weight", "ln_final.weight", "ln_final.bias",
                          "transformer.resblocks.0.ln_1.weight", "transformer.resblocks.0.attn.out_proj.weight",
                          "transformer.resblocks.0.ln_2.bias", "transformer.resblocks.0.mlp.c_fc.weight",
                          "transformer.resblocks.0.mlp.c_proj.bias"}) {
    EXPECT_TRUE(byKey.count(prefix + key)) << key;
  }
  for (const auto& [key, tensor] : byKey) EXPECT_EQ(key.find("q_proj"), std::string::npos) << key;
  EXPECT_EQ(byKey.size(), 5u + config.layers * 12u);

  // A recognisable fused tensor: its q, k and v thirds must land in q_proj, k_proj, v_proj.
  const torch::Tensor fused = torch::arange(3 * w * w, torch::kFloat).reshape({3 * w, w});
  byKey[prefix + "transformer.resblocks.1.attn.in_proj_weight"] = fused;
  TempFile file("bigg");
  sinter::io::writeSafetensors(file.path.string(), {byKey.begin(), byKey.end()});
  sinter::io::SafetensorsFile reader(file.path.string());
  EXPECT_EQ(OpenClipTextModelImpl::inferFromCheckpoint(reader, prefix), config);
  OpenClipTextModel loaded(config);
  loaded->loadFromCheckpoint(reader, prefix);
  auto params = loaded->named_parameters();
  EXPECT_TRUE(torch::equal(params["text_model.encoder.layers.1.self_attn.q_proj.weight"], fused.narrow(0, 0, w)));
  EXPECT_TRUE(torch::equal(params["text_model.encoder.layers.1.self_attn.k_proj.weight"], fused.narrow(0, w, w)));
  EXPECT_TRUE(torch::equal(params["text_model.encoder.layers.1.self_attn.v_proj.weight"], fused.narrow(0, 2 * w, w)));

  // Written back: every tensor identical to the file's.
  for (const auto& [key, tensor] : loaded->checkpointTensors(prefix)) {
    EXPECT_TRUE(torch::equal(tensor, reader.tensor(key))) << key;
  }
}

TEST(OpenClipTextModel, LoadReportsWrongFusedShape) {
  const ClipTextConfig config = ClipTextConfig::tinyOpenClipBigG();
  const std::string prefix = OpenClipTextModelImpl::kSdxlPrefix;
  OpenClipTextModel model(config);
  auto tensors = model->checkpointTensors(prefix);
  for (auto& [key, tensor] : tensors) {
    if (key == prefix + "transformer.resblocks.0.attn.in_proj_weight") tensor = torch::zeros({2 * config.width, config.width});
  }
  TempFile file("bigg_bad");
  sinter::io::writeSafetensors(file.path.string(), tensors);
  sinter::io::SafetensorsFile reader(file.path.string());
  try {
    model->loadFromCheckpoint(reader, prefix);
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("in_proj_weight is [64, 32], expected [96, 32]"), std::string::npos) << e.what();
  }
}

TEST(ClipTextLinearLayers, MatchTheModulesAndFullSizes) {
  for (const ClipTextConfig& config : {ClipTextConfig::tinyClipL(), ClipTextConfig::tinyOpenClipBigG()}) {
    ClipTextTransformer transformer(config);
    std::vector<LinearInfo> fromModules;
    for (const auto& item : transformer->named_modules()) {
      if (auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value())) {
        fromModules.push_back({"text_model." + item.key(), linear->inFeatures(), linear->outFeatures(), true});
      }
    }
    const auto listed = clipTextLinearLayers(config);
    ASSERT_EQ(listed.size(), fromModules.size());
    for (std::size_t i = 0; i < listed.size(); ++i) {
      EXPECT_EQ(listed[i].path, fromModules[i].path);
      EXPECT_EQ(listed[i].in, fromModules[i].in);
      EXPECT_EQ(listed[i].out, fromModules[i].out);
    }
  }
  const auto clipL = clipTextLinearLayers(ClipTextConfig::sdxlClipL());
  ASSERT_EQ(clipL.size(), 72u);
  EXPECT_EQ(clipL[2].path, "text_model.encoder.layers.0.self_attn.q_proj");
  EXPECT_EQ(clipL[4].path, "text_model.encoder.layers.0.mlp.fc1");
  EXPECT_EQ(clipL[4].out, 3072);
  const auto bigG = clipTextLinearLayers(ClipTextConfig::sdxlOpenClipBigG());
  ASSERT_EQ(bigG.size(), 192u);
  EXPECT_EQ(bigG.back().path, "text_model.encoder.layers.31.mlp.fc2");
  EXPECT_EQ(bigG.back().in, 5120);
  EXPECT_EQ(bigG.back().out, 1280);
}

TEST(SdxlTextEncoding, MergeChunksAsSdScripts) {
  // 2 captions x 3 chunks of 77 positions: values say (caption, chunk, position).
  const torch::Tensor hidden =
      (torch::arange(2 * 3 * 77, torch::kFloat).reshape({6, 77, 1})).expand({6, 77, 4}).contiguous();
  const torch::Tensor merged = mergeChunkHiddenStates(hidden, 2, 3);
  ASSERT_EQ(merged.sizes(), (std::vector<int64_t>{2, 227, 4}));
  for (int64_t b = 0; b < 2; ++b) {
    const float base = b * 3 * 77;
    EXPECT_EQ(merged[b][0][0].item<float>(), base);  // first chunk's bos
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t t = 0; t < 75; ++t) EXPECT_EQ(merged[b][1 + c * 75 + t][0].item<float>(), base + c * 77 + 1 + t);
    EXPECT_EQ(merged[b][226][0].item<float>(), base + 3 * 77 - 1);  // last chunk's last position
  }
  EXPECT_EQ(mergeChunkHiddenStates(hidden, 6, 1).sizes(), hidden.sizes());
}

TEST(SdxlTextEncoding, ContextAndPooledFromBothEncoders) {
  torch::manual_seed(6);
  ClipTextModel clipL(ClipTextConfig::tinyClipL());
  OpenClipTextModel bigG(ClipTextConfig::tinyOpenClipBigG());
  torch::NoGradGuard noGrad;

  // One chunk per caption.
  const torch::Tensor idsL = tokenIds(2, 6, kEos).unsqueeze(1), idsG = tokenIds(2, 6, 0).unsqueeze(1);
  const SdxlTextConditioning single = encodeSdxlText(clipL, bigG, idsL, idsG);
  EXPECT_EQ(single.context.sizes(), (std::vector<int64_t>{2, 77, 64}));
  EXPECT_EQ(single.pooled.sizes(), (std::vector<int64_t>{2, 32}));
  EXPECT_TRUE(allClose(single.context.narrow(2, 0, 32), clipL->penultimateHiddenState(idsL.squeeze(1))));
  EXPECT_TRUE(allClose(single.context.narrow(2, 32, 32), bigG->forward(idsG.squeeze(1)).penultimateHiddenState));

  // Three chunks per caption (max_token_length 225): each encoded alone, merged, pooled from chunk 0.
  const torch::Tensor chunksL = torch::stack({tokenIds(2, 75, kEos, 1), tokenIds(2, 75, kEos, 2), tokenIds(2, 10, kEos, 3)}, 1);
  const torch::Tensor chunksG = torch::stack({tokenIds(2, 75, 0, 1), tokenIds(2, 75, 0, 2), tokenIds(2, 10, 0, 3)}, 1);
  const SdxlTextConditioning chunked = encodeSdxlText(clipL, bigG, chunksL, chunksG);
  ASSERT_EQ(chunked.context.sizes(), (std::vector<int64_t>{2, 227, 64}));
  const torch::Tensor secondChunkL = clipL->penultimateHiddenState(chunksL.select(1, 1));
  EXPECT_TRUE(allClose(chunked.context.index({idx::Slice(), idx::Slice(76, 151), idx::Slice(0, 32)}),
                       secondChunkL.index({idx::Slice(), idx::Slice(1, 76)})));
  const OpenClipTextOutput firstChunkG = bigG->forward(chunksG.select(1, 0));
  EXPECT_TRUE(allClose(chunked.pooled, firstChunkG.pooled));
  EXPECT_TRUE(allClose(chunked.context.index({idx::Slice(), 0, idx::Slice(32, 64)}),
                       firstChunkG.penultimateHiddenState.index({idx::Slice(), 0})));

  const torch::Tensor asTensor = tokenChunksTensor({{{1, 2, 3}, {4, 5, 6}}});
  EXPECT_EQ(asTensor.sizes(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(asTensor[0][1][2].item<int64_t>(), 6);
  EXPECT_THROW(tokenChunksTensor({{{1, 2}}, {{1, 2}, {3, 4}}}), std::invalid_argument);
}
