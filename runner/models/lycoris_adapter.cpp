#include "models/lycoris_adapter.h"

namespace sinter::models {

namespace F = torch::nn::functional;

namespace {

torch::Tensor uniform(at::IntArrayRef sizes, const torch::Tensor& like) {
  return torch::rand(sizes, like.options().dtype(torch::kFloat32));
}

// LyCORIS's rank dropout: a keep-mask of `n` entries (rand > p), rescaled by 1 / its mean with
// rank_dropout_scale (a mask that keeps nothing stays zero rather than dividing by 0).
torch::Tensor rankMask(const LycorisAdapter& a, int64_t n, const torch::Tensor& like) {
  torch::Tensor mask = (uniform({n}, like) > a.rankDropout).to(like.scalar_type());
  if (a.rankDropoutScale) mask = mask / mask.mean().clamp_min(1.0 / static_cast<double>(n));
  return mask;
}

// The delta's rows scaled by a mask of the out channels.
torch::Tensor maskRows(const torch::Tensor& w, const torch::Tensor& mask) {
  std::vector<int64_t> sizes(w.dim(), 1);
  sizes[0] = w.size(0);
  return w * mask.view(sizes);
}

torch::Tensor layerOp(const LycorisAdapter& a, const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                      bool withStride = true) {
  if (!a.shape.conv()) return F::linear(x, weight, bias);
  auto options = F::Conv2dFuncOptions().bias(bias);
  if (withStride) options.stride(a.stride).padding(a.padding);
  return F::conv2d(x, weight, options);
}

torch::Tensor maybeDropout(const LycorisAdapter& a, torch::Tensor h, bool training) {
  if (!training || a.dropout <= 0.0) return h;
  return F::dropout(h, F::DropoutFuncOptions().p(a.dropout).training(true));
}

// LoCon's delta applied through its factors: up(mid(down(x))) * scale * multiplier (* scalar),
// with the rank channels dropped when `dropRank`.
torch::Tensor lowRankDiff(const LycorisAdapter& a, const torch::Tensor& x, bool dropRank = false) {
  const torch::ScalarType dtype = x.scalar_type();
  const LycorisTensors& t = a.tensors;
  torch::Tensor h;
  if (t.has("lora_mid.weight")) {
    h = layerOp(a, x, t.at("lora_down.weight").to(dtype), {}, /*withStride=*/false);
    h = layerOp(a, h, t.at("lora_mid.weight").to(dtype), {});
  } else {
    h = layerOp(a, x, t.at("lora_down.weight").to(dtype), {});
  }
  if (dropRank) {
    torch::Tensor mask = rankMask(a, h.size(a.shape.conv() ? 1 : -1), h);
    h = h * (a.shape.conv() ? mask.view({1, -1, 1, 1}) : mask);
  }
  const torch::Tensor up = t.at("lora_up.weight").to(dtype);
  torch::Tensor out = a.shape.conv() ? F::conv2d(h, up) : F::linear(h, up);
  out = out * (a.scale * a.multiplier);
  if (t.has("scalar")) out = out * t.at("scalar").to(dtype);
  return out;
}

// bypass_mode: the adapter's own path beside base(x) (LyCORIS's bypass_forward_diff).
torch::Tensor bypassDiff(const LycorisAdapter& a, const torch::Tensor& x, bool training) {
  const torch::ScalarType dtype = x.scalar_type();
  const LycorisTensors& t = a.tensors;
  switch (a.algo) {
    case LycorisAlgo::LoCon: {
      // Bypass drops rank channels (rebuild mode drops output rows instead).
      torch::Tensor out = lowRankDiff(a, x, training && a.rankDropout > 0.0);
      return maybeDropout(a, out, training);
    }
    case LycorisAlgo::LoHa: {
      torch::Tensor d = lycorisDelta(a.algo, a.shape, t, a.scale, {});
      if (training && a.rankDropout > 0.0) d = maskRows(d, rankMask(a, d.size(0), d));
      return maybeDropout(a, layerOp(a, x, (d * a.multiplier).to(dtype), {}), training);
    }
    case LycorisAlgo::LoKr: {
      // LyCORIS's LoKr bypass leaves alpha / dim and rank dropout out; so does this.
      const torch::Tensor d = lycorisDelta(a.algo, a.shape, t, 1.0, {});
      return maybeDropout(a, layerOp(a, x, (d * a.multiplier).to(dtype), {}), training);
    }
    default: break;
  }
  throw std::logic_error(std::string("bypass_mode has no additive form for LyCORIS algo ") + lycorisAlgoName(a.algo));
}

}  // namespace

std::vector<torch::Tensor> LycorisAdapter::trainedTensors() const {
  std::vector<torch::Tensor> out;
  for (const std::string& name : tensors.names)
    if (tensors.trained.at(name)) out.push_back(tensors.at(name));
  return out;
}

torch::Tensor lycorisWeightDelta(const LycorisAdapter& a, const torch::Tensor& baseWeight, bool training) {
  torch::Tensor d = lycorisDelta(a.algo, a.shape, a.tensors, a.scale, baseWeight);
  const bool dropRows = training && a.rankDropout > 0.0 && a.algo != LycorisAlgo::IA3;
  if (dropRows) d = maskRows(d, rankMask(a, d.size(0), d));
  if (a.doraWd()) return lycorisDecomposedDelta(baseWeight, d, a.tensors.at("dora_scale"), a.multiplier);
  return a.multiplier == 1.0 ? d : d * a.multiplier;
}

torch::Tensor lycorisForward(const LycorisAdapter& a, const torch::Tensor& x, const LycorisLayer& layer, bool training) {
  const torch::ScalarType dtype = x.scalar_type();
  torch::Tensor keep;  // module dropout: 0 drops the adapter for this forward
  if (training && a.moduleDropout > 0.0) keep = (uniform({1}, x) >= a.moduleDropout).to(dtype);

  if (a.algo == LycorisAlgo::IA3 && a.bypass) {
    // IA3's bypass scales the layer's input or output channels (bias included) by 1 + w m.
    torch::Tensor w = a.tensors.at("weight").to(dtype) * a.multiplier;
    if (keep.defined()) w = w * keep;
    const torch::Tensor s = w + 1.0;
    const bool onInput = a.tensors.at("on_input").item<int64_t>() != 0;
    return onInput ? layer.base(x * s) : layer.base(x) * s;
  }
  if (a.bypass) {
    torch::Tensor extra = bypassDiff(a, x, training);
    if (keep.defined()) extra = extra * keep;
    return layer.base(x) + extra;
  }
  // Rebuild mode. LyCORIS computes base(x) + op(x, delta): two full-size products. The same sum
  // is formed here more cheaply: LoCon without DoRA as standard LoRA does, through its low-rank
  // factors (rank dropout drops rows of the delta, which are the output channels of that path);
  // everything else as one product with the merged weight W + delta.
  if (a.algo == LycorisAlgo::LoCon && !a.doraWd()) {
    torch::Tensor extra = lowRankDiff(a, x);
    if (training && a.rankDropout > 0.0) {
      const torch::Tensor mask = rankMask(a, a.shape.out, extra);
      extra = extra * (a.shape.conv() ? mask.view({1, -1, 1, 1}) : mask);
    }
    if (keep.defined()) extra = extra * keep;
    return layer.base(x) + extra;
  }
  torch::Tensor dw, db;
  if (a.algo == LycorisAlgo::Full) {
    // FullModule: the trained weight and bias in place of the base ones, rank dropout by out rows.
    dw = lycorisDelta(a.algo, a.shape, a.tensors, 1.0, layer.weight);
    if (a.tensors.has("bias") && layer.bias.defined()) db = a.tensors.at("bias") - layer.bias.to(a.tensors.at("bias").scalar_type());
    if (training && a.rankDropout > 0.0) {
      const torch::Tensor mask = (uniform({a.shape.out}, dw) > a.rankDropout).to(dw.scalar_type());
      dw = maskRows(dw, mask);
      if (db.defined()) db = db * mask;
    }
    if (a.multiplier != 1.0) {
      dw = dw * a.multiplier;
      if (db.defined()) db = db * a.multiplier;
    }
  } else {
    dw = lycorisWeightDelta(a, layer.weight, training);
  }
  if (keep.defined()) {
    dw = dw * keep.to(dw.scalar_type());
    if (db.defined()) db = db * keep.to(db.scalar_type());
  }
  const torch::Tensor weight = layer.weight.to(dtype) + dw.to(dtype);
  torch::Tensor bias = layer.bias.defined() ? layer.bias.to(dtype) : torch::Tensor();
  if (db.defined()) bias = bias + db.to(dtype);
  return layerOp(a, x, weight, bias);
}

}  // namespace sinter::models
