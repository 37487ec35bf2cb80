#include "models/adapters/lycoris_adapter.h"

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

// LoCon through its factors: base + up(mid(down(x))) * scale * multiplier (* scalar). Everything
// that scales the product (scale, multiplier, scalar, a mask of output rows, module dropout's keep
// factor) is folded into the small up weight, so the path costs what standard LoRA's does: the
// down product and one up product accumulated onto the base output. `rankKeep` masks the rank
// channels (bypass mode's rank dropout), `outKeep` the output channels (rebuild mode's). An
// undefined `base` returns the adapter's part alone.
torch::Tensor lowRankForward(const LycorisAdapter& a, const torch::Tensor& x, const torch::Tensor& base, const torch::Tensor& rankKeep,
                             const torch::Tensor& outKeep, const torch::Tensor& keep) {
  const torch::ScalarType dtype = x.scalar_type();
  const LycorisTensors& t = a.tensors;
  torch::Tensor h;
  if (t.has("lora_mid.weight")) {
    h = layerOp(a, x, t.at("lora_down.weight").to(dtype), {}, /*withStride=*/false);
    h = layerOp(a, h, t.at("lora_mid.weight").to(dtype), {});
  } else {
    h = layerOp(a, x, t.at("lora_down.weight").to(dtype), {});
  }
  torch::Tensor up = t.at("lora_up.weight").to(dtype) * (a.scale * a.multiplier);  // [out, rank(, 1, 1)]
  std::vector<int64_t> rows(up.dim(), 1), cols(up.dim(), 1);
  rows[0] = up.size(0);
  cols[1] = up.size(1);
  if (t.has("scalar")) up = up * t.at("scalar").to(dtype);
  if (rankKeep.defined()) up = up * rankKeep.to(dtype).view(cols);
  if (outKeep.defined()) up = up * outKeep.to(dtype).view(rows);
  if (keep.defined()) up = up * keep;
  if (!base.defined()) return a.shape.conv() ? F::conv2d(h, up) : F::linear(h, up);
  if (a.shape.conv()) return base + F::conv2d(h, up);
  // base + h up^T as one accumulating product.
  const torch::Tensor flat = torch::addmm(base.reshape({-1, up.size(0)}), h.reshape({-1, up.size(1)}), up.t());
  return flat.view(base.sizes());
}

// The trained tensors as a rebuilt weight uses them: cast to the compute dtype, as autocast casts
// LyCORIS's factors for their products under mixed precision (the delta is then formed at the
// activations' precision, at half the memory). dora_scale keeps its dtype: DoRA's norms are float32.
LycorisTensors computeTensors(const LycorisTensors& t, torch::ScalarType dtype) {
  LycorisTensors out = t;
  for (auto& [name, tensor] : out.byName)
    if (out.trained.at(name) && name != "dora_scale" && tensor.is_floating_point()) tensor = tensor.to(dtype);
  return out;
}

// bypass_mode: the adapter's own path beside base(x) (LyCORIS's bypass_forward_diff).
torch::Tensor bypassDiff(const LycorisAdapter& a, const torch::Tensor& x, bool training) {
  const torch::ScalarType dtype = x.scalar_type();
  const LycorisTensors& t = a.tensors;
  switch (a.algo) {
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

torch::Tensor weightDelta(const LycorisAdapter& a, const LycorisTensors& tensors, const torch::Tensor& baseWeight,
                          const torch::Tensor& rowMask) {
  torch::Tensor d = lycorisDelta(a.algo, a.shape, tensors, a.scale, baseWeight);
  if (rowMask.defined()) d = maskRows(d, rowMask.to(d.scalar_type()));
  if (a.doraWd()) return lycorisDecomposedDelta(baseWeight, d, tensors.at("dora_scale"), a.multiplier);
  return a.multiplier == 1.0 ? d : d * a.multiplier;
}

bool dropsRows(const LycorisAdapter& a, bool training) { return training && a.rankDropout > 0.0 && a.algo != LycorisAlgo::IA3; }

}  // namespace

std::vector<torch::Tensor> LycorisAdapter::trainedTensors() const {
  std::vector<torch::Tensor> out;
  for (const std::string& name : tensors.names)
    if (tensors.trained.at(name)) out.push_back(tensors.at(name));
  return out;
}

bool lycorisBuildsFullDelta(const LycorisAdapter& a) {
  if (a.bypass) return false;
  return a.algo == LycorisAlgo::LoHa || a.algo == LycorisAlgo::LoKr || (a.algo == LycorisAlgo::LoCon && a.doraWd());
}

torch::Tensor lycorisComputeDelta(const LycorisAdapter& a, const torch::Tensor& baseWeight, torch::ScalarType dtype,
                                  const torch::Tensor& rowMask) {
  const torch::Tensor base = baseWeight.defined() ? baseWeight.to(dtype) : baseWeight;
  return weightDelta(a, computeTensors(a.tensors, dtype), base, rowMask).to(dtype);
}

torch::Tensor lycorisRowMask(const LycorisAdapter& a, const torch::Tensor& like) {
  return rankMask(a, a.shape.out, torch::empty({0}, like.options().dtype(torch::kFloat32)));  // float32, on like's device
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
  const bool dropRank = training && a.rankDropout > 0.0;
  // LoCon without DoRA goes through its factors in both modes. Bypass drops rank channels and
  // applies LyCORIS's own dropout to the adapter's output; rebuild mode drops rows of the delta,
  // which are the output channels of the path.
  if (a.algo == LycorisAlgo::LoCon && !a.doraWd()) {
    const torch::Tensor base = layer.base(x);
    torch::Tensor rankKeep, outKeep;
    if (dropRank && a.bypass) rankKeep = rankMask(a, a.tensors.at("lora_up.weight").size(1), x);
    else if (dropRank) outKeep = rankMask(a, a.shape.out, x);
    if (a.bypass && a.dropout > 0.0 && training)
      return base + maybeDropout(a, lowRankForward(a, x, {}, rankKeep, outKeep, keep), training);
    return lowRankForward(a, x, base, rankKeep, outKeep, keep);
  }
  if (a.bypass) {
    torch::Tensor extra = bypassDiff(a, x, training);
    if (keep.defined()) extra = extra * keep;
    return layer.base(x) + extra;
  }
  // Rebuild mode. LyCORIS computes base(x) + op(x, delta): two full-size products. The same sum
  // is one product here, with the merged weight W + delta formed at the activations' precision.
  const torch::Tensor baseWeight = layer.weight.to(dtype);
  torch::Tensor bias = layer.bias.defined() ? layer.bias.to(dtype) : torch::Tensor();
  torch::Tensor weight;
  if (a.algo == LycorisAlgo::Full) {
    // FullModule: the trained weight and bias in place of the base ones, rank dropout by out rows.
    const torch::Tensor& trained = a.tensors.at("weight");
    const bool hasBias = a.tensors.has("bias") && layer.bias.defined();
    if (!dropRank && a.multiplier == 1.0 && !keep.defined()) {
      weight = trained.to(dtype);
      if (hasBias) bias = a.tensors.at("bias").to(dtype);
    } else {
      torch::Tensor dw = trained.to(dtype) - baseWeight, db;
      if (hasBias) db = a.tensors.at("bias").to(dtype) - bias;
      torch::Tensor factor = torch::full({a.shape.out}, a.multiplier, x.options());
      if (dropRank) factor = factor * (uniform({a.shape.out}, dw) > a.rankDropout).to(dtype);
      if (keep.defined()) factor = factor * keep;
      weight = baseWeight + maskRows(dw, factor);
      if (hasBias) bias = bias + db * factor;
    }
  } else {
    // The step's delta where it is built once per step (network/lycoris_step_deltas.h).
    torch::Tensor dw = training && a.stepDelta.defined()
                           ? a.stepDelta
                           : lycorisComputeDelta(a, baseWeight, dtype, dropsRows(a, training) ? lycorisRowMask(a, x) : torch::Tensor());
    if (keep.defined()) dw = dw * keep;
    weight = baseWeight + dw;
  }
  return layerOp(a, x, weight, bias);
}

}  // namespace sinter::models
