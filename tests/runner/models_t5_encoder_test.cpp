// The T5 v1.1 encoder (FLUX's text encoder 2) on a tiny config: the relative position buckets by
// hand, the forward pass against a plain re-computation of T5's formulas from the same weights,
// the padding mask, its file keys and loading errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/text_encoders/t5_encoder.h"

using namespace sinter;
using namespace sinter::models;
namespace fs = std::filesystem;

TEST(T5Encoder, RelativePositionBucketsWorkedByHand) {
  // 32 buckets, max distance 128: 16 per direction (keys after the query in 16..31), distances
  // 0..7 exact, then 8 + floor(ln(d / 8) / ln(16) * 8), at most 15.
  const torch::Tensor relative = torch::tensor({0, -3, 3, -8, -16, -127, -500, 200}, torch::kLong);
  const torch::Tensor buckets = t5RelativePositionBucket(relative, 32, 128);
  // -16: 8 + floor(ln 2 / ln 16 * 8) = 10; -127: 8 + floor(7.977) = 15; -500: 8 + 11 = 19 -> 15.
  const std::vector<int64_t> expected{0, 3, 19, 8, 10, 15, 15, 31};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(buckets[i].item<int64_t>(), expected[i]) << relative[i].item<int64_t>();
}

TEST(T5Encoder, LayerNormIsRootMeanSquareWithoutCentring) {
  T5LayerNorm norm(4, 1e-6);
  {
    torch::NoGradGuard g;
    norm->weight.copy_(torch::tensor({1.0, 2.0, 0.5, 1.0}));
  }
  const torch::Tensor x = torch::tensor({{1.0, 2.0, 3.0, 4.0}});
  const double rms = std::sqrt((1 + 4 + 9 + 16) / 4.0 + 1e-6);
  const torch::Tensor expected = torch::tensor({{1.0 / rms, 4.0 / rms, 1.5 / rms, 4.0 / rms}});
  EXPECT_TRUE(torch::allclose(norm(x), expected, 1e-6, 1e-6));
}

namespace {

// T5's encoder written out with plain tensor ops from the module's own weights.
torch::Tensor reference(T5Encoder& t5, const torch::Tensor& ids, const torch::Tensor& mask) {
  const T5EncoderConfig& c = t5->config();
  auto params = t5->named_parameters();
  auto w = [&](const std::string& key) { return params[key]; };
  auto rms = [&](const torch::Tensor& x, const torch::Tensor& weight) {
    return weight * (x / torch::sqrt(x.pow(2).mean(-1, true) + 1e-6));
  };
  const int64_t b = ids.size(0), l = ids.size(1);
  torch::Tensor h = w("shared.weight").index_select(0, ids.flatten()).view({b, l, c.dModel});
  // bias[head][q][k] = relative_attention_bias[bucket(k - q)][head]
  torch::Tensor bias = torch::zeros({1, c.heads, l, l});
  const torch::Tensor table = w("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  for (int64_t qi = 0; qi < l; ++qi)
    for (int64_t ki = 0; ki < l; ++ki) {
      const int64_t bucket = t5RelativePositionBucket(torch::tensor({ki - qi}, torch::kLong), c.relativeBuckets,
                                                      c.relativeMaxDistance)[0]
                                 .item<int64_t>();
      bias.select(2, qi).select(2, ki).copy_(table[bucket].view({1, c.heads}));
    }
  if (mask.defined()) bias = bias + (1 - mask).view({b, 1, 1, l}) * -1e30;
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "encoder.block." + std::to_string(i) + ".layer.";
    const torch::Tensor x = rms(h, w(p + "0.layer_norm.weight"));
    auto split = [&](const torch::Tensor& t) { return t.view({b, l, c.heads, c.dKv}).permute({0, 2, 1, 3}); };
    const torch::Tensor q = split(torch::matmul(x, w(p + "0.SelfAttention.q.weight").t()));
    const torch::Tensor k = split(torch::matmul(x, w(p + "0.SelfAttention.k.weight").t()));
    const torch::Tensor v = split(torch::matmul(x, w(p + "0.SelfAttention.v.weight").t()));
    const torch::Tensor scores = torch::matmul(q, k.transpose(-1, -2)) + bias;  // no 1/sqrt(d)
    const torch::Tensor attended = torch::matmul(torch::softmax(scores, -1), v).permute({0, 2, 1, 3}).reshape({b, l, -1});
    h = h + torch::matmul(attended, w(p + "0.SelfAttention.o.weight").t());
    const torch::Tensor y = rms(h, w(p + "1.layer_norm.weight"));
    const torch::Tensor g = torch::matmul(y, w(p + "1.DenseReluDense.wi_0.weight").t());
    const torch::Tensor gelu = 0.5 * g * (1 + torch::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g.pow(3))));
    h = h + torch::matmul(gelu * torch::matmul(y, w(p + "1.DenseReluDense.wi_1.weight").t()),
                          w(p + "1.DenseReluDense.wo.weight").t());
  }
  return rms(h, w("encoder.final_layer_norm.weight"));
}

T5Encoder randomTiny(uint64_t seed) {
  torch::manual_seed(seed);
  T5Encoder t5(T5EncoderConfig::tiny());
  torch::NoGradGuard g;
  for (auto& p : t5->parameters()) p.normal_(0.0, 0.3);  // layer norm weights drawn too, so they matter
  return t5;
}

}  // namespace

TEST(T5Encoder, ForwardMatchesThePlainFormulas) {
  T5Encoder t5 = randomTiny(1);
  const torch::Tensor ids = torch::tensor({{5, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 30},
                                           {7, 7, 2, 3, 11, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
                                          torch::kLong);  // 18 tokens: distances past the exact buckets
  torch::NoGradGuard g;
  const torch::Tensor out = t5(ids);
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 18, 32}));
  EXPECT_TRUE(torch::allclose(out, reference(t5, ids, {}), 1e-5, 1e-5));
  const torch::Tensor mask = (ids != 0).to(torch::kFloat32);
  EXPECT_TRUE(torch::allclose(t5(ids, mask), reference(t5, ids, mask), 1e-5, 1e-5));
}

TEST(T5Encoder, MaskedPaddingDoesNotChangeTheTokens) {
  T5Encoder t5 = randomTiny(2);
  const torch::Tensor a = torch::tensor({{4, 8, 1, 0, 0}}, torch::kLong), b = torch::tensor({{4, 8, 1, 17, 23}}, torch::kLong);
  const torch::Tensor mask = torch::tensor({{1.0, 1.0, 1.0, 0.0, 0.0}});
  torch::NoGradGuard g;
  EXPECT_TRUE(torch::allclose(t5(a, mask).slice(1, 0, 3), t5(b, mask).slice(1, 0, 3), 1e-6, 1e-6));
  EXPECT_FALSE(torch::allclose(t5(a).slice(1, 0, 3), t5(b).slice(1, 0, 3), 1e-6, 1e-6));  // without it they attend
}

TEST(T5Encoder, FileKeysRoundTripAndErrors) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_t5_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  T5Encoder t5 = randomTiny(3);
  const auto tensors = t5->checkpointTensors();
  EXPECT_EQ(tensors.size(), 9u * 2 + 3);  // shared, 9 per block, block 0's relative bias, final norm
  std::set<std::string> keys;
  for (const auto& [k, v] : tensors) keys.insert(k);
  for (const char* key : {"shared.weight", "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                          "encoder.block.1.layer.0.SelfAttention.o.weight", "encoder.block.1.layer.1.DenseReluDense.wi_1.weight",
                          "encoder.block.1.layer.1.layer_norm.weight", "encoder.final_layer_norm.weight"})
    EXPECT_TRUE(keys.count(key)) << key;
  EXPECT_FALSE(keys.count("encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"));
  // Full size: 24 blocks -> 219 keys, as t5xxl_fp16.safetensors holds.
  EXPECT_EQ(T5Encoder(T5EncoderConfig::tiny())->checkpointTensors().size() + 9 * 22, 219u);

  const std::string path = (dir / "t5.safetensors").string();
  std::vector<std::pair<std::string, torch::Tensor>> half;
  for (const auto& [k, v] : tensors) half.emplace_back(k, v.to(torch::kFloat16));
  io::writeSafetensors(path, half, {});
  io::SafetensorsFile file(path);
  const T5EncoderConfig inferred = T5EncoderConfig::inferFromCheckpoint(file);
  EXPECT_EQ(inferred.layers, 2);
  EXPECT_EQ(inferred.heads, 4);
  EXPECT_EQ(inferred.dKv, 8);
  EXPECT_EQ(inferred.dFf, 48);
  EXPECT_EQ(inferred.relativeBuckets, 8);
  T5Encoder loaded(T5EncoderConfig::tiny());
  loaded->loadFromCheckpoint(file);
  const torch::Tensor ids = torch::tensor({{3, 1, 0}}, torch::kLong);
  torch::NoGradGuard g;
  EXPECT_TRUE(torch::allclose(loaded(ids), t5(ids), 1e-2, 1e-2));  // through fp16

  // A missing key is named.
  std::vector<std::pair<std::string, torch::Tensor>> missing;
  for (const auto& [k, v] : tensors)
    if (k != "encoder.block.1.layer.1.DenseReluDense.wo.weight") missing.emplace_back(k, v);
  const std::string broken = (dir / "broken.safetensors").string();
  io::writeSafetensors(broken, missing, {});
  try {
    T5Encoder(T5EncoderConfig::tiny())->loadFromCheckpoint(io::SafetensorsFile(broken));
    FAIL() << "a missing key was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.block.1.layer.1.DenseReluDense.wo.weight"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}
