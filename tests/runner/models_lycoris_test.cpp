// LyCORIS's algorithms on a Linear, a 1x1 and a 3x3 Conv2d, against float64 references written
// from LyCORIS's definitions (lycoris/modules/*.py) element by element: the weight delta, the
// layer's output, and every trained tensor's gradient against central finite differences.
#include <gtest/gtest.h>

#include <functional>

#include "models/layers/conv2d.h"
#include "models/layers/linear.h"
#include "models/adapters/lycoris_adapter.h"

using namespace sinter::models;

namespace {

constexpr auto kF64 = torch::kFloat64;

struct Case {
  std::string label;
  LycorisSettings settings;
  LycorisLayerShape shape;
};

LycorisLayerShape linearShape() { return {12, 8, 0, true}; }
LycorisLayerShape conv1Shape() { return {8, 6, 1, true}; }
LycorisLayerShape conv3Shape() { return {8, 6, 3, true}; }

// Every element of `sizes` from one index, row-major.
void forEachIndex(const std::vector<int64_t>& sizes, const std::function<void(const std::vector<int64_t>&)>& f) {
  std::vector<int64_t> idx(sizes.size(), 0);
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  for (int64_t n = 0; n < total; ++n) {
    int64_t rest = n;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      idx[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    f(idx);
  }
}

double at(const torch::Tensor& t, const std::vector<int64_t>& i) {
  torch::Tensor v = t;
  for (int64_t k : i) v = v[k];
  return v.item<double>();
}

// LyCORIS's delta for one weight element, written out as sums over the factors.
double referenceElement(const LycorisAdapter& a, const torch::Tensor& base, const std::vector<int64_t>& e) {
  const LycorisTensors& t = a.tensors;
  const int64_t o = e[0], i = e[1];
  const bool conv = a.shape.conv();
  const int64_t k = a.shape.kernel, kh = conv ? e[2] : 0, kw = conv ? e[3] : 0;
  const double scalar = t.has("scalar") ? t.at("scalar").item<double>() : 1.0;
  auto w4 = [&](const torch::Tensor& x, int64_t p, int64_t q) {  // x[p][q] or x[p][q][kh][kw] of a 4-d tensor
    return x.dim() == 4 ? at(x, {p, q, x.size(2) == 1 ? 0 : kh, x.size(3) == 1 ? 0 : kw}) : at(x, {p, q});
  };
  switch (a.algo) {
    case LycorisAlgo::LoCon: {
      const torch::Tensor up = t.at("lora_up.weight"), down = t.at("lora_down.weight");
      const int64_t r = down.size(0);
      double s = 0;
      if (t.has("lora_mid.weight")) {
        const torch::Tensor mid = t.at("lora_mid.weight");
        for (int64_t p = 0; p < r; ++p)
          for (int64_t q = 0; q < r; ++q) s += at(up, {o, p, 0, 0}) * at(mid, {p, q, kh, kw}) * at(down, {q, i, 0, 0});
      } else {
        for (int64_t p = 0; p < r; ++p) s += w4(up, o, p) * w4(down, p, i);
      }
      return s * a.scale * scalar;
    }
    case LycorisAlgo::LoHa: {
      auto part = [&](const char* wa, const char* wb, const char* core) {
        const torch::Tensor A = t.at(wa), B = t.at(wb);
        double s = 0;
        if (t.has(core)) {  // Tucker: t [r, r, k, k], a [r, out], b [r, in]
          const torch::Tensor T = t.at(core);
          for (int64_t p = 0; p < T.size(0); ++p)
            for (int64_t q = 0; q < T.size(1); ++q) s += at(T, {p, q, kh, kw}) * at(A, {p, o}) * at(B, {q, i});
        } else {  // a [out, r], b [r, in * k * k]
          const int64_t col = conv ? (i * k + kh) * k + kw : i;
          for (int64_t p = 0; p < A.size(1); ++p) s += at(A, {o, p}) * at(B, {p, col});
        }
        return s;
      };
      return part("hada_w1_a", "hada_w1_b", "hada_t1") * part("hada_w2_a", "hada_w2_b", "hada_t2") * a.scale * scalar;
    }
    case LycorisAlgo::LoKr: {
      // out = a * b, in = c * d: element (p b + q, r d + s) = w1[p][r] w2[q][s](kh, kw).
      const torch::Tensor w1 = t.has("lokr_w1") ? t.at("lokr_w1") : torch::mm(t.at("lokr_w1_a"), t.at("lokr_w1_b"));
      const int64_t b = a.shape.out / w1.size(0), d = a.shape.in / w1.size(1);
      const int64_t p = o / b, q = o % b, r = i / d, s = i % d;
      double w2 = 0;
      if (t.has("lokr_w2")) {
        w2 = conv ? at(t.at("lokr_w2"), {q, s, kh, kw}) : at(t.at("lokr_w2"), {q, s});
      } else if (t.has("lokr_t2")) {  // t [r, r, k, k], w2_a [r, b], w2_b [r, d]
        const torch::Tensor T = t.at("lokr_t2"), A = t.at("lokr_w2_a"), B = t.at("lokr_w2_b");
        for (int64_t x = 0; x < T.size(0); ++x)
          for (int64_t y = 0; y < T.size(1); ++y) w2 += at(T, {x, y, kh, kw}) * at(A, {x, q}) * at(B, {y, s});
      } else {  // w2_a [b, r], w2_b [r, d * k * k]
        const torch::Tensor A = t.at("lokr_w2_a"), B = t.at("lokr_w2_b");
        const int64_t col = conv ? (s * k + kh) * k + kw : s;
        for (int64_t x = 0; x < A.size(1); ++x) w2 += at(A, {q, x}) * at(B, {x, col});
      }
      return at(w1, {p, r}) * w2 * a.scale * scalar;
    }
    case LycorisAlgo::IA3: {
      const torch::Tensor w = t.at("weight").flatten();
      const bool onInput = t.at("on_input").item<int64_t>() != 0;
      return at(base, e) * w[onInput ? i : o].item<double>();
    }
    case LycorisAlgo::Full: return at(t.at("weight"), e) - at(base, e);
  }
  return 0;
}

torch::Tensor referenceDelta(const LycorisAdapter& a, const torch::Tensor& base) {
  torch::Tensor out = torch::zeros(a.shape.weightSizes(), kF64);
  forEachIndex(a.shape.weightSizes(), [&](const std::vector<int64_t>& e) {
    torch::Tensor v = out;
    for (size_t d = 0; d + 1 < e.size(); ++d) v = v[e[d]];
    v[e.back()] = referenceElement(a, base, e);
  });
  if (a.doraWd()) {  // W' = (W + d) dora_scale / (row norm + eps), minus W
    const torch::Tensor merged = base + out;
    torch::Tensor result = torch::zeros_like(merged);
    for (int64_t o = 0; o < merged.size(0); ++o) {
      double norm2 = 0;
      forEachIndex(merged[o].sizes().vec(), [&](const std::vector<int64_t>& e) { norm2 += std::pow(at(merged[o], e), 2); });
      const double s = a.tensors.at("dora_scale").flatten()[o].item<double>() / (std::sqrt(norm2) + 2.220446049250313e-16);
      result[o] = merged[o] * (a.multiplier * (s - 1.0) + 1.0) - base[o];
    }
    return result;
  }
  return out * a.multiplier;
}

// An adapter on a double-precision layer with every tensor random (not the zero initialisation).
LycorisAdapter randomAdapter(const Case& c, const torch::Tensor& base, const torch::Tensor& bias) {
  LycorisAdapter a;
  a.algo = c.settings.algo;
  a.shape = c.shape;
  a.padding = c.shape.kernel == 3 ? 1 : 0;
  a.tensors = createLycorisTensors(c.settings, c.shape, base, bias, &a.scale);
  for (const std::string& name : a.tensors.names) {
    torch::Tensor& v = a.tensors.at(name);
    if (!a.tensors.trained.at(name)) continue;
    torch::Tensor r = v.to(kF64);
    if (name == "dora_scale") r = r * (1.0 + 0.1 * torch::rand_like(r));
    else if (name == "weight" && a.algo == LycorisAlgo::Full) r = r + 0.1 * torch::randn_like(r);
    else if (name == "bias") r = r + 0.1 * torch::randn_like(r);
    else if (name == "scalar") r = torch::tensor(0.7, kF64);
    else r = 0.3 * torch::randn_like(r);
    v = r.set_requires_grad(true);
  }
  for (const std::string& name : a.tensors.names)
    if (!a.tensors.trained.at(name)) a.tensors.at(name) = a.tensors.at(name).to(a.tensors.at(name).scalar_type() == torch::kLong ? torch::kLong : kF64);
  return a;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  auto add = [&](const std::string& label, LycorisAlgo algo, LycorisLayerShape shape, std::function<void(LycorisSettings&)> edit = {}) {
    LycorisSettings s;
    s.algo = algo;
    s.dim = 2;
    s.alpha = 1.5;
    if (edit) edit(s);
    out.push_back({label, s, shape});
  };
  const std::vector<std::pair<std::string, LycorisLayerShape>> shapes{
      {"linear", linearShape()}, {"conv1x1", conv1Shape()}, {"conv3x3", conv3Shape()}};
  for (const auto& [name, shape] : shapes) {
    add("locon_" + name, LycorisAlgo::LoCon, shape);
    add("locon_scalar_" + name, LycorisAlgo::LoCon, shape, [](LycorisSettings& s) { s.useScalar = true; });
    add("locon_dora_" + name, LycorisAlgo::LoCon, shape, [](LycorisSettings& s) { s.doraWd = true; });
    add("loha_" + name, LycorisAlgo::LoHa, shape);
    add("loha_dora_" + name, LycorisAlgo::LoHa, shape, [](LycorisSettings& s) { s.doraWd = true; });
    add("lokr_" + name, LycorisAlgo::LoKr, shape, [](LycorisSettings& s) { s.dim = 1; });
    add("lokr_both_" + name, LycorisAlgo::LoKr, shape, [](LycorisSettings& s) {
      s.dim = 1;
      s.decomposeBoth = true;
    });
    add("lokr_full_" + name, LycorisAlgo::LoKr, shape, [](LycorisSettings& s) { s.dim = 10000; });
    add("lokr_factor_dora_" + name, LycorisAlgo::LoKr, shape, [](LycorisSettings& s) {
      s.factor = 2;
      s.dim = 1;
      s.doraWd = true;
    });
    add("ia3_" + name, LycorisAlgo::IA3, shape);
    add("ia3_input_" + name, LycorisAlgo::IA3, shape, [](LycorisSettings& s) { s.trainOnInput = true; });
    add("full_" + name, LycorisAlgo::Full, shape);
  }
  add("locon_tucker_conv3x3", LycorisAlgo::LoCon, conv3Shape(), [](LycorisSettings& s) { s.useTucker = true; });
  add("loha_tucker_conv3x3", LycorisAlgo::LoHa, conv3Shape(), [](LycorisSettings& s) { s.useTucker = true; });
  add("lokr_tucker_conv3x3", LycorisAlgo::LoKr, conv3Shape(), [](LycorisSettings& s) {
    s.useTucker = true;
    s.dim = 1;
  });
  return out;
}

}  // namespace

TEST(Lycoris, FactorizationAsLycorisDocumentsIt) {
  // lycoris/functional/general.py factorization's docstring table, where its code agrees; for 360
  // the code (and so LyCORIS's files) gives (18, 20) and, with factor 16, (15, 24), where the
  // docstring says (8, 45) and (12, 30).
  const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> table{
      {127, -1, 1, 127}, {128, -1, 8, 16},  {250, -1, 10, 25}, {360, -1, 18, 20}, {512, -1, 16, 32}, {1024, -1, 32, 32},
      {128, 2, 2, 64},   {250, 2, 2, 125},  {1024, 4, 4, 256}, {360, 4, 4, 90},   {250, 8, 5, 50},   {360, 8, 8, 45},
      {1024, 8, 8, 128}, {127, 16, 1, 127}, {250, 16, 10, 25}, {360, 16, 15, 24}, {1024, 16, 16, 64}};
  for (const auto& [dim, factor, m, n] : table)
    EXPECT_EQ(lycorisFactorization(dim, factor), std::make_pair(m, n)) << dim << " factor " << factor;
}

TEST(Lycoris, ShapesInitialisationAndScale) {
  const torch::Tensor base = torch::randn({12, 8});
  double scale = 0;
  LycorisSettings s;
  s.dim = 2;
  s.alpha = 1.0;
  s.algo = LycorisAlgo::LoHa;
  LycorisTensors t = createLycorisTensors(s, linearShape(), base, {}, &scale);
  EXPECT_DOUBLE_EQ(scale, 0.5);
  EXPECT_EQ(t.names, (std::vector<std::string>{"alpha", "hada_w1_a", "hada_w1_b", "hada_w2_a", "hada_w2_b"}));
  EXPECT_EQ(t.at("hada_w1_a").sizes(), (std::vector<int64_t>{12, 2}));
  EXPECT_EQ(t.at("hada_w2_b").sizes(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(t.at("hada_w2_a").abs().sum().item<double>(), 0.0);  // the delta starts at zero
  // LoKr: 12 = 3 x 4, 8 = 2 x 4; dim 1 < 4 / 2 decomposes w2; w1 full; both full makes scale 1.
  s.algo = LycorisAlgo::LoKr;
  s.dim = 1;
  t = createLycorisTensors(s, linearShape(), base, {}, &scale);
  EXPECT_EQ(t.names, (std::vector<std::string>{"alpha", "lokr_w1", "lokr_w2_a", "lokr_w2_b"}));
  EXPECT_EQ(t.at("lokr_w1").sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.at("lokr_w2_a").sizes(), (std::vector<int64_t>{4, 1}));
  EXPECT_DOUBLE_EQ(scale, 1.0);  // alpha 1 / dim 1
  s.dim = 8;
  t = createLycorisTensors(s, linearShape(), base, {}, &scale);
  EXPECT_EQ(t.names, (std::vector<std::string>{"alpha", "lokr_w1", "lokr_w2"}));
  EXPECT_DOUBLE_EQ(scale, 1.0);
  EXPECT_EQ(t.at("alpha").item<float>(), 8.0f);  // alpha = dim
  // LoCon's conv with Tucker: down 1x1, mid kxk; dora_scale is the base's row norms.
  s.algo = LycorisAlgo::LoCon;
  s.dim = 4;
  s.useTucker = true;
  s.doraWd = true;
  const torch::Tensor convBase = torch::randn({8, 6, 3, 3});
  t = createLycorisTensors(s, conv3Shape(), convBase, {}, &scale);
  EXPECT_EQ(t.names, (std::vector<std::string>{"dora_scale", "alpha", "lora_up.weight", "lora_down.weight", "lora_mid.weight"}));
  EXPECT_EQ(t.at("lora_down.weight").sizes(), (std::vector<int64_t>{4, 6, 1, 1}));
  EXPECT_EQ(t.at("lora_mid.weight").sizes(), (std::vector<int64_t>{4, 4, 3, 3}));
  EXPECT_TRUE(torch::allclose(t.at("dora_scale").flatten(), convBase.reshape({8, -1}).norm(2, {1})));
  // IA3 on a conv: [1, out, 1, 1] zeros and an on_input flag.
  s.algo = LycorisAlgo::IA3;
  t = createLycorisTensors(s, conv3Shape(), convBase, {}, &scale);
  EXPECT_EQ(t.at("weight").sizes(), (std::vector<int64_t>{1, 8, 1, 1}));
  EXPECT_EQ(t.at("on_input").item<int64_t>(), 0);
}

TEST(Lycoris, DeltaOutputAndGradientsMatchFloat64References) {
  torch::manual_seed(3);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.label);
    const bool conv = c.shape.conv();
    Linear linear{nullptr};
    Conv2d conv2d{nullptr};
    if (conv) {
      conv2d = Conv2d(c.shape.in, c.shape.out, c.shape.kernel, 1, c.shape.kernel == 3 ? 1 : 0);
      conv2d->to(kF64);
      conv2d->weight.set_requires_grad(false);
      conv2d->bias.set_requires_grad(false);
    } else {
      linear = Linear(c.shape.in, c.shape.out);
      linear->to(kF64);
      linear->weight.set_requires_grad(false);
      linear->bias.set_requires_grad(false);
    }
    const torch::Tensor base = conv ? conv2d->weight : linear->weight, bias = conv ? conv2d->bias : linear->bias;
    for (double multiplier : {1.0, 0.6}) {
      auto adapter = std::make_shared<LycorisAdapter>(randomAdapter(c, base, bias));
      adapter->multiplier = multiplier;
      // The delta.
      const torch::Tensor delta = lycorisComputeDelta(*adapter, base, kF64, /*rowMask=*/{});
      const torch::Tensor ref = referenceDelta(*adapter, base);
      ASSERT_EQ(delta.sizes(), ref.sizes());
      EXPECT_TRUE(torch::allclose(delta, ref, 1e-10, 1e-12)) << (delta - ref).abs().max().item<double>();
      // The layer's output: base op with W + delta (and full's bias).
      if (conv) conv2d->lycoris = adapter;
      else linear->lycoris = adapter;
      const torch::Tensor x = conv ? torch::randn({2, c.shape.in, 5, 5}, kF64) : torch::randn({2, 3, c.shape.in}, kF64);
      auto forward = [&] { return conv ? conv2d->forward(x) : linear->forward(x); };
      const torch::Tensor y = forward();
      torch::Tensor b = bias;
      if (c.settings.algo == LycorisAlgo::Full) b = bias + (adapter->tensors.at("bias") - bias) * multiplier;
      namespace F = torch::nn::functional;
      const torch::Tensor yRef = conv ? F::conv2d(x, base + ref, F::Conv2dFuncOptions().bias(b).padding(c.shape.kernel == 3 ? 1 : 0))
                                      : F::linear(x, base + ref, b);
      EXPECT_TRUE(torch::allclose(y, yRef, 1e-10, 1e-12)) << (y - yRef).abs().max().item<double>();
      // Gradients of sum(y * g) against central differences, a few elements of every trained tensor.
      const torch::Tensor g = torch::randn_like(y);
      const std::vector<torch::Tensor> trained = adapter->trainedTensors();
      const std::vector<torch::Tensor> grads = torch::autograd::grad({(forward() * g).sum()}, trained);
      for (size_t n = 0; n < trained.size(); ++n) {
        torch::Tensor flat = trained[n].detach().view({-1});
        for (int64_t e : {int64_t(0), flat.numel() / 2, flat.numel() - 1}) {
          const double keep = flat[e].item<double>(), h = 1e-6;
          double loss[2];
          for (int side = 0; side < 2; ++side) {
            flat[e] = keep + (side ? -h : h);
            torch::NoGradGuard noGrad;
            loss[side] = (forward() * g).sum().item<double>();
          }
          flat[e] = keep;
          const double numeric = (loss[0] - loss[1]) / (2 * h);
          EXPECT_NEAR(grads[n].reshape({-1})[e].item<double>(), numeric, 1e-6 * std::max(1.0, std::abs(numeric)))
              << adapter->tensors.names[n] << "[" << e << "]";
        }
      }
      if (conv) conv2d->lycoris.reset();
      else linear->lycoris.reset();
    }
  }
}

TEST(Lycoris, StateTensorsFoldTheScalarAndWriteFullAsDifferences) {
  torch::manual_seed(4);
  const torch::Tensor base = torch::randn({12, 8}), bias = torch::randn({12});
  LycorisSettings s;
  s.algo = LycorisAlgo::LoCon;
  s.useScalar = true;
  double scale = 0;
  LycorisTensors t = createLycorisTensors(s, linearShape(), base, bias, &scale);
  t.at("scalar") = torch::tensor(0.25f);
  const auto state = lycorisStateTensors(s.algo, t, base, bias);
  ASSERT_EQ(state.size(), 3u);  // alpha, lora_up.weight, lora_down.weight: no scalar key
  EXPECT_EQ(state[1].first, "lora_up.weight");
  EXPECT_TRUE(torch::allclose(state[1].second, t.at("lora_up.weight") * 0.25));
  s.algo = LycorisAlgo::Full;
  t = createLycorisTensors(s, linearShape(), base, bias, &scale);
  t.at("weight") = t.at("weight") + 1.0;
  const auto full = lycorisStateTensors(s.algo, t, base, bias);
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(full[0].first, "diff");
  EXPECT_EQ(full[1].first, "diff_b");
  EXPECT_TRUE(torch::allclose(full[0].second, torch::ones({12, 8})));
  EXPECT_TRUE(torch::allclose(full[1].second, torch::zeros({12})));
}

TEST(Lycoris, BypassModeAddsTheAdaptersOwnPath) {
  torch::manual_seed(5);
  Linear linear(8, 12);
  linear->weight.set_requires_grad(false);
  LycorisSettings s;
  s.algo = LycorisAlgo::LoCon;
  auto adapter = std::make_shared<LycorisAdapter>();
  adapter->shape = linearShape();
  adapter->tensors = createLycorisTensors(s, adapter->shape, linear->weight, linear->bias, &adapter->scale);
  adapter->tensors.at("lora_up.weight").normal_();
  adapter->bypass = true;
  linear->lycoris = adapter;
  const torch::Tensor x = torch::randn({4, 8});
  const torch::Tensor up = adapter->tensors.at("lora_up.weight"), down = adapter->tensors.at("lora_down.weight");
  const torch::Tensor expected = torch::nn::functional::linear(x, linear->weight, linear->bias) + x.mm(down.t()).mm(up.t()) * adapter->scale;
  EXPECT_TRUE(torch::allclose(linear->forward(x), expected, 1e-5, 1e-5));
  // IA3's bypass scales the output, bias included.
  s.algo = LycorisAlgo::IA3;
  adapter->algo = s.algo;
  adapter->tensors = createLycorisTensors(s, adapter->shape, linear->weight, linear->bias, &adapter->scale);
  adapter->tensors.at("weight").fill_(0.5);
  const torch::Tensor plain = torch::nn::functional::linear(x, linear->weight, linear->bias);
  EXPECT_TRUE(torch::allclose(linear->forward(x), plain * 1.5, 1e-5, 1e-5));
}
