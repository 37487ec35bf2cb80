#pragma once
// LyCORIS's algorithms as weight formulas (KohakuBlueleaf/LyCORIS, lycoris/modules/*.py): the
// parameters each algorithm gives a Linear or a Conv2d (shapes, initialisation, state-dict names)
// and the weight delta they stand for. No layer state here: models/adapters/lycoris_adapter.h applies it.
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sinter::models {

// network_args algo: "locon" (alias "lora"), "loha", "lokr", "ia3", "full".
enum class LycorisAlgo { LoCon, LoHa, LoKr, IA3, Full };
const char* lycorisAlgoName(LycorisAlgo algo);

// The layer an adapter sits on: a Linear (kernel 0) or a square Conv2d.
struct LycorisLayerShape {
  int64_t out = 0, in = 0;
  int64_t kernel = 0;  // 0: Linear
  bool hasBias = false;
  bool conv() const { return kernel > 0; }
  std::vector<int64_t> weightSizes() const;  // [out, in] or [out, in, k, k]
};

// One module's settings, as lycoris.kohya hands them to the algorithm's module.
struct LycorisSettings {
  LycorisAlgo algo = LycorisAlgo::LoCon;
  int64_t dim = 4;       // lora_dim (conv_dim for a 3x3 conv)
  double alpha = 1.0;    // 0 means alpha = dim
  bool useTucker = false;     // use_tucker (Tucker core for kernels other than 1x1)
  bool useScalar = false;     // use_scalar: a trained scalar, starting at 0, on the delta
  bool decomposeBoth = false; // decompose_both (LoKr: w1 as a low-rank product too)
  int64_t factor = -1;        // factor (LoKr)
  bool doraWd = false;        // dora_wd: weight decomposition (LoCon, LoHa, LoKr)
  bool trainOnInput = false;  // IA3: scale input channels rather than output ones
};

// A module's tensors by their LyCORIS state-dict names, in the order its state dict lists them.
// Trained tensors are marked; buffers (alpha, on_input) are not.
struct LycorisTensors {
  std::vector<std::string> names;
  std::map<std::string, torch::Tensor> byName;
  std::map<std::string, bool> trained;

  void add(const std::string& name, torch::Tensor tensor, bool isTrained);
  bool has(const std::string& name) const { return byName.count(name) > 0; }
  const torch::Tensor& at(const std::string& name) const;
  torch::Tensor& at(const std::string& name);
};

// LyCORIS's factorization(dimension, factor): two factors m <= n of `dimension`, m as close to
// `factor` as the divisors allow (factor <= 0: the most balanced pair); LoKr's w1 takes m, w2 n.
std::pair<int64_t, int64_t> lycorisFactorization(int64_t dimension, int64_t factor);

// The trained tensors and buffers an algorithm creates for a layer, initialised as LyCORIS does
// (LoCon: Kaiming-uniform down, zero up; LoHa: normal(0.1) w1_a, normal(1) w1_b/w2_b, zero w2_a;
// LoKr: Kaiming-uniform w1 and w2_a, zero w2_b or w2; IA3: zeros; full: the base weight itself),
// in fp32 on the CPU. `baseWeight` (the layer's, any dtype) gives dora_scale and full's start.
// *scale receives alpha / dim as LyCORIS computes it (LoKr with w1 and w2 both full: 1).
LycorisTensors createLycorisTensors(const LycorisSettings& settings, const LycorisLayerShape& shape,
                                    const torch::Tensor& baseWeight, const torch::Tensor& baseBias, double* scale);

// The scale a module's tensors imply (file loading): alpha / dim from its alpha buffer and shapes.
double lycorisScaleOf(LycorisAlgo algo, const LycorisTensors& tensors);

// The weight delta before the multiplier, without rank dropout: LoCon up @ down (or the Tucker
// rebuild) times scale, LoHa (w1_a w1_b) * (w2_a w2_b) times scale, LoKr kron(w1, w2) times scale,
// each times the scalar when there is one; IA3 the base weight times its channel scales; full the
// trained weight minus the base. Shaped as the layer's weight, in the tensors' dtype.
torch::Tensor lycorisDelta(LycorisAlgo algo, const LycorisLayerShape& shape, const LycorisTensors& tensors, double scale,
                           const torch::Tensor& baseWeight);

// DoRA (dora_wd, wd_on_output): W' = (W + delta) * m(dora_scale / (||(W + delta)_row|| + eps)),
// m(s) = multiplier (s - 1) + 1; returns W' - W, computed in dora_scale's dtype.
torch::Tensor lycorisDecomposedDelta(const torch::Tensor& baseWeight, const torch::Tensor& delta, const torch::Tensor& doraScale,
                                     double multiplier);

// A tensor's state-dict form: LyCORIS saves the scalar folded into the first tensor (lora_up,
// hada_w1_a, lokr_w1 or lokr_w1_a) and full's weight and bias as their difference to the base.
std::vector<std::pair<std::string, torch::Tensor>> lycorisStateTensors(LycorisAlgo algo, const LycorisTensors& tensors,
                                                                      const torch::Tensor& baseWeight,
                                                                      const torch::Tensor& baseBias);

// The name the scalar is folded into (empty where the algorithm has none).
std::string lycorisScalarTarget(LycorisAlgo algo, const LycorisTensors& tensors);

}  // namespace sinter::models
