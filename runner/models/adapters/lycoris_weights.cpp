#include "models/adapters/lycoris_weights.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sinter::models {

namespace {

torch::Tensor kaiming(std::vector<int64_t> sizes) {
  torch::Tensor t = torch::empty(sizes, torch::kFloat32);
  torch::nn::init::kaiming_uniform_(t, std::sqrt(5.0));  // "same as microsoft's"
  return t;
}

torch::Tensor normal(std::vector<int64_t> sizes, double std) { return torch::empty(sizes, torch::kFloat32).normal_(0.0, std); }

torch::Tensor zeros(std::vector<int64_t> sizes) { return torch::zeros(sizes, torch::kFloat32); }

// [out, 1] or [out, 1, 1, 1]: the base weight's row norms (wd_on_output), in fp32.
torch::Tensor rowNorms(const torch::Tensor& weight) {
  const torch::Tensor w = weight.detach().to(torch::kCPU, torch::kFloat32);
  std::vector<int64_t> sizes(w.dim(), 1);
  sizes[0] = w.size(0);
  return w.reshape({w.size(0), -1}).norm(2, {1}, /*keepdim=*/true).reshape(sizes).contiguous();
}

// LyCORIS's rebuild_tucker: einsum("i j ..., i p, j r -> p r ...", t, wa, wb) for a 4-d core.
torch::Tensor rebuildTucker(const torch::Tensor& t, const torch::Tensor& wa, const torch::Tensor& wb) {
  return torch::einsum("ijkl,ip,jr->prkl", {t, wa, wb});
}

bool hasScalar(const LycorisTensors& t) { return t.has("scalar"); }

}  // namespace

const char* lycorisAlgoName(LycorisAlgo algo) {
  switch (algo) {
    case LycorisAlgo::LoCon: return "locon";
    case LycorisAlgo::LoHa: return "loha";
    case LycorisAlgo::LoKr: return "lokr";
    case LycorisAlgo::IA3: return "ia3";
    case LycorisAlgo::Full: return "full";
  }
  return "locon";
}

std::vector<int64_t> LycorisLayerShape::weightSizes() const {
  return conv() ? std::vector<int64_t>{out, in, kernel, kernel} : std::vector<int64_t>{out, in};
}

void LycorisTensors::add(const std::string& name, torch::Tensor tensor, bool isTrained) {
  if (!has(name)) names.push_back(name);
  byName[name] = std::move(tensor);
  trained[name] = isTrained;
}

const torch::Tensor& LycorisTensors::at(const std::string& name) const {
  auto it = byName.find(name);
  if (it == byName.end()) throw std::out_of_range("LyCORIS module has no tensor '" + name + "'");
  return it->second;
}

torch::Tensor& LycorisTensors::at(const std::string& name) {
  auto it = byName.find(name);
  if (it == byName.end()) throw std::out_of_range("LyCORIS module has no tensor '" + name + "'");
  return it->second;
}

std::pair<int64_t, int64_t> lycorisFactorization(int64_t dimension, int64_t factor) {
  if (factor > 0 && dimension % factor == 0) {
    int64_t m = factor, n = dimension / factor;
    if (m > n) std::swap(m, n);
    return {m, n};
  }
  if (factor < 0) factor = dimension;
  int64_t m = 1, n = dimension;
  const int64_t length = m + n;
  while (m < n) {
    int64_t newM = m + 1;
    while (dimension % newM != 0) ++newM;
    const int64_t newN = dimension / newM;
    if (newM + newN > length || newM > factor) break;
    m = newM;
    n = newN;
  }
  if (m > n) std::swap(m, n);
  return {m, n};
}

LycorisTensors createLycorisTensors(const LycorisSettings& s, const LycorisLayerShape& shape, const torch::Tensor& baseWeight,
                                    const torch::Tensor& baseBias, double* scale) {
  LycorisTensors t;
  const int64_t dim = s.dim, out = shape.out, in = shape.in, k = shape.kernel;
  const bool tuckerKernel = shape.conv() && k != 1 && s.useTucker;
  double alpha = s.alpha == 0.0 ? static_cast<double>(dim) : s.alpha;
  auto addDora = [&] {
    if (s.doraWd) t.add("dora_scale", rowNorms(baseWeight), true);
  };
  switch (s.algo) {
    case LycorisAlgo::LoCon: {
      addDora();
      torch::Tensor down, up, mid;
      if (shape.conv()) {
        down = kaiming(tuckerKernel ? std::vector<int64_t>{dim, in, 1, 1} : std::vector<int64_t>{dim, in, k, k});
        if (tuckerKernel) mid = kaiming({dim, dim, k, k});
        up = s.useScalar ? kaiming({out, dim, 1, 1}) : zeros({out, dim, 1, 1});
      } else {
        down = kaiming({dim, in});
        up = s.useScalar ? kaiming({out, dim}) : zeros({out, dim});
      }
      t.add("alpha", torch::tensor(static_cast<float>(alpha)), false);
      t.add("lora_up.weight", up, true);
      t.add("lora_down.weight", down, true);
      if (mid.defined()) t.add("lora_mid.weight", mid, true);
      break;
    }
    case LycorisAlgo::LoHa: {
      t.add("alpha", torch::tensor(static_cast<float>(alpha)), false);
      addDora();
      if (tuckerKernel) {
        t.add("hada_w1_a", normal({dim, out}, 0.1), true);
        t.add("hada_w1_b", normal({dim, in}, 1.0), true);
        t.add("hada_w2_a", s.useScalar ? normal({dim, out}, 0.1) : zeros({dim, out}), true);
        t.add("hada_w2_b", normal({dim, in}, 1.0), true);
        t.add("hada_t1", normal({dim, dim, k, k}, 0.1), true);
        t.add("hada_t2", normal({dim, dim, k, k}, 0.1), true);
      } else {
        const int64_t cols = shape.conv() ? in * k * k : in;
        t.add("hada_w1_a", normal({out, dim}, 0.1), true);
        t.add("hada_w1_b", normal({dim, cols}, 1.0), true);
        t.add("hada_w2_a", s.useScalar ? normal({out, dim}, 0.1) : zeros({out, dim}), true);
        t.add("hada_w2_b", normal({dim, cols}, 1.0), true);
      }
      break;
    }
    case LycorisAlgo::LoKr: {
      // out = a * b, in = c * d; w1 [a, c] (the smaller factors), w2 [b, d(, k, k)].
      const auto [a, b] = lycorisFactorization(out, s.factor);
      const auto [c, d] = lycorisFactorization(in, s.factor);
      const bool useW1 = !(s.decomposeBoth && static_cast<double>(dim) < std::max(a, c) / 2.0);
      const bool useW2 = !(static_cast<double>(dim) < std::max(b, d) / 2.0);
      if (useW1 && useW2) alpha = static_cast<double>(dim);  // scale 1
      t.add("alpha", torch::tensor(static_cast<float>(alpha)), false);
      addDora();
      if (useW1) {
        t.add("lokr_w1", kaiming({a, c}), true);
      } else {
        t.add("lokr_w1_a", kaiming({a, dim}), true);
        t.add("lokr_w1_b", kaiming({dim, c}), true);
      }
      if (useW2) {
        const std::vector<int64_t> sizes = shape.conv() ? std::vector<int64_t>{b, d, k, k} : std::vector<int64_t>{b, d};
        t.add("lokr_w2", s.useScalar ? kaiming(sizes) : zeros(sizes), true);
      } else if (tuckerKernel) {
        torch::Tensor core = kaiming({dim, dim, k, k});
        t.add("lokr_w2_a", kaiming({dim, b}), true);
        t.add("lokr_w2_b", s.useScalar ? kaiming({dim, d}) : zeros({dim, d}), true);
        t.add("lokr_t2", core, true);
      } else {
        const int64_t cols = shape.conv() ? d * k * k : d;
        t.add("lokr_w2_a", kaiming({b, dim}), true);
        t.add("lokr_w2_b", s.useScalar ? kaiming({dim, cols}) : zeros({dim, cols}), true);
      }
      break;
    }
    case LycorisAlgo::IA3: {
      const int64_t channels = s.trainOnInput ? in : out;
      t.add("weight", shape.conv() ? zeros({1, channels, 1, 1}) : zeros({channels}), true);
      t.add("on_input", torch::tensor(static_cast<int64_t>(s.trainOnInput)), false);
      *scale = 1.0;
      return t;
    }
    case LycorisAlgo::Full: {
      t.add("weight", baseWeight.detach().to(torch::kCPU, torch::kFloat32).clone(), true);
      if (baseBias.defined()) t.add("bias", baseBias.detach().to(torch::kCPU, torch::kFloat32).clone(), true);
      *scale = 1.0;
      return t;
    }
  }
  // The scalar starts at 0 (the first tensor then need not be zero) and is trained; not saved.
  if (s.useScalar) t.add("scalar", torch::zeros({}, torch::kFloat32), true);
  *scale = alpha / static_cast<double>(dim);
  return t;
}

double lycorisScaleOf(LycorisAlgo algo, const LycorisTensors& t) {
  int64_t dim = 0;
  switch (algo) {
    case LycorisAlgo::LoCon: dim = t.at("lora_down.weight").size(0); break;
    case LycorisAlgo::LoHa: dim = t.at("hada_w1_b").size(0); break;
    case LycorisAlgo::LoKr:
      if (t.has("lokr_w1_b")) dim = t.at("lokr_w1_b").size(0);
      else if (t.has("lokr_w2_b")) dim = t.at("lokr_w2_b").size(0);
      else return 1.0;  // both full matrices
      break;
    case LycorisAlgo::IA3:
    case LycorisAlgo::Full: return 1.0;
  }
  if (!t.has("alpha")) return 1.0;
  const double alpha = t.at("alpha").to(torch::kFloat64).item<double>();
  return (alpha == 0.0 ? static_cast<double>(dim) : alpha) / static_cast<double>(dim);
}

torch::Tensor lycorisDelta(LycorisAlgo algo, const LycorisLayerShape& shape, const LycorisTensors& t, double scale,
                           const torch::Tensor& baseWeight) {
  const std::vector<int64_t> sizes = shape.weightSizes();
  torch::Tensor w;
  switch (algo) {
    case LycorisAlgo::LoCon: {
      const torch::Tensor& up = t.at("lora_up.weight");
      const torch::Tensor& down = t.at("lora_down.weight");
      if (t.has("lora_mid.weight"))
        w = rebuildTucker(t.at("lora_mid.weight"), up.reshape({up.size(0), -1}).t(), down.reshape({down.size(0), -1}));
      else
        w = torch::mm(up.reshape({up.size(0), -1}), down.reshape({down.size(0), -1}));
      break;
    }
    case LycorisAlgo::LoHa: {
      if (t.has("hada_t1")) {
        const torch::Tensor r1 = torch::einsum("ijkl,jr,ip->prkl", {t.at("hada_t1"), t.at("hada_w1_b"), t.at("hada_w1_a")});
        const torch::Tensor r2 = torch::einsum("ijkl,jr,ip->prkl", {t.at("hada_t2"), t.at("hada_w2_b"), t.at("hada_w2_a")});
        w = r1 * r2;
      } else {
        w = torch::mm(t.at("hada_w1_a"), t.at("hada_w1_b")) * torch::mm(t.at("hada_w2_a"), t.at("hada_w2_b"));
      }
      break;
    }
    case LycorisAlgo::LoKr: {
      const torch::Tensor w1 = t.has("lokr_w1") ? t.at("lokr_w1") : torch::mm(t.at("lokr_w1_a"), t.at("lokr_w1_b"));
      torch::Tensor w2;
      if (t.has("lokr_w2")) w2 = t.at("lokr_w2");
      else if (t.has("lokr_t2")) w2 = rebuildTucker(t.at("lokr_t2"), t.at("lokr_w2_a"), t.at("lokr_w2_b"));
      else w2 = torch::mm(t.at("lokr_w2_a"), t.at("lokr_w2_b"));
      torch::Tensor w1x = w1;
      while (w1x.dim() < w2.dim()) w1x = w1x.unsqueeze(-1);
      w = torch::kron(w1x, w2.contiguous());
      break;
    }
    case LycorisAlgo::IA3: {
      const torch::Tensor& s = t.at("weight");
      const torch::Tensor base = baseWeight.to(s.scalar_type());
      const bool onInput = t.at("on_input").item<int64_t>() != 0;
      if (shape.conv()) return onInput ? base * s : base * s.transpose(0, 1);  // s: [1, C, 1, 1]
      return onInput ? base * s : base * s.unsqueeze(1);
    }
    case LycorisAlgo::Full: {
      const torch::Tensor& weight = t.at("weight");
      return weight - baseWeight.to(weight.scalar_type());
    }
  }
  w = w.reshape(sizes) * scale;
  if (hasScalar(t)) w = w * t.at("scalar");
  return w;
}

torch::Tensor lycorisDecomposedDelta(const torch::Tensor& baseWeight, const torch::Tensor& delta, const torch::Tensor& doraScale,
                                     double multiplier) {
  const torch::ScalarType dtype = doraScale.scalar_type();
  const torch::Tensor base = baseWeight.to(dtype);
  const torch::Tensor merged = base + delta.to(dtype);
  std::vector<int64_t> sizes(merged.dim(), 1);
  sizes[0] = merged.size(0);
  const double eps = dtype == torch::kFloat64 ? std::numeric_limits<double>::epsilon()
                     : dtype == torch::kFloat32 ? static_cast<double>(std::numeric_limits<float>::epsilon())
                     : dtype == torch::kBFloat16 ? 0.0078125
                                                 : 0.0009765625;  // fp16
  const torch::Tensor norm = merged.reshape({merged.size(0), -1}).norm(2, {1}).reshape(sizes) + eps;
  torch::Tensor s = doraScale / norm;
  if (multiplier != 1.0) s = multiplier * (s - 1.0) + 1.0;
  return merged * s - base;
}

std::string lycorisScalarTarget(LycorisAlgo algo, const LycorisTensors& t) {
  switch (algo) {
    case LycorisAlgo::LoCon: return "lora_up.weight";
    case LycorisAlgo::LoHa: return "hada_w1_a";
    case LycorisAlgo::LoKr: return t.has("lokr_w1") ? "lokr_w1" : "lokr_w1_a";
    default: return "";
  }
}

std::vector<std::pair<std::string, torch::Tensor>> lycorisStateTensors(LycorisAlgo algo, const LycorisTensors& t,
                                                                      const torch::Tensor& baseWeight,
                                                                      const torch::Tensor& baseBias) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  const std::string scalarTarget = hasScalar(t) ? lycorisScalarTarget(algo, t) : "";
  for (const std::string& name : t.names) {
    if (name == "scalar") continue;
    torch::Tensor v = t.at(name).detach();
    if (algo == LycorisAlgo::Full) {
      // FullModule.custom_state_dict: the trained weight and bias as differences to the base.
      if (name == "weight") out.emplace_back("diff", v - baseWeight.detach().to(v.device(), v.scalar_type()));
      else if (name == "bias") out.emplace_back("diff_b", v - baseBias.detach().to(v.device(), v.scalar_type()));
      continue;
    }
    if (name == scalarTarget) v = v * t.at("scalar").detach();
    out.emplace_back(name, v);
  }
  return out;
}

}  // namespace sinter::models
