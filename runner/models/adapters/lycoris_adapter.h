#pragma once
// A LyCORIS adapter as a Linear or a Conv2d of the models carries it (lycoris.kohya's modules):
// its algorithm, tensors, scale, multiplier and dropouts, and its forward pass. Kept apart from
// LoraAdapter so that standard LoRA's fused path stays as it is: a layer with a LyCORIS adapter
// takes lycorisForward instead.
#include <torch/torch.h>

#include <functional>

#include "models/adapters/lycoris_weights.h"

namespace sinter::models {

struct LycorisAdapter {
  LycorisAlgo algo = LycorisAlgo::LoCon;
  LycorisLayerShape shape;
  LycorisTensors tensors;  // trained tensors in the network's dtype; buffers (alpha, on_input)
  double scale = 1.0;      // alpha / dim
  double multiplier = 1.0;
  double rankDropout = 0.0;    // rank_dropout: whole output rows of the delta (bypass: rank channels)
  double moduleDropout = 0.0;  // module_dropout: the whole adapter per forward
  bool rankDropoutScale = false;  // rank_dropout_scale: the kept rows rescaled by 1 / their mean
  double dropout = 0.0;        // LyCORIS's own dropout argument, on the bypass output only
  bool bypass = false;         // bypass_mode: base(x) + adapter(x) rather than a rebuilt weight
  int64_t stride = 1, padding = 0;
  // Set by network/lycoris_step_deltas.h while a run builds this module's delta once per step:
  // the step's delta (multiplier, rank dropout's mask and DoRA applied), in the compute dtype, a
  // leaf the training forward passes use instead of rebuilding it.
  torch::Tensor stepDelta;

  bool doraWd() const { return tensors.has("dora_scale"); }
  bool drawsRandom() const { return rankDropout > 0.0 || moduleDropout > 0.0 || (bypass && dropout > 0.0); }
  std::vector<torch::Tensor> trainedTensors() const;
};

// The layer the adapter sits on, as its forward sees it: the frozen base weight and bias (the
// weight in the dtype it is used in) and the layer's own forward of an input.
struct LycorisLayer {
  torch::Tensor weight;
  torch::Tensor bias;
  std::function<torch::Tensor(const torch::Tensor&)> base;
};

// Whether the rebuild forward forms this adapter's delta as a full-size weight whose building is
// worth doing once per step (LoHa, LoKr, DoRA; not bypass mode, LoCon's factor path, IA3's
// scaling or full's difference).
bool lycorisBuildsFullDelta(const LycorisAdapter& adapter);

// The delta the rebuild forward adds to `baseWeight` (in `dtype`, the compute dtype): formed at
// that precision, times the multiplier, its rows times `rowMask` (rank dropout; undefined: none),
// DoRA applied. `baseWeight` may be undefined where the algorithm does not read it (LoCon, LoHa,
// LoKr without DoRA).
torch::Tensor lycorisComputeDelta(const LycorisAdapter& adapter, const torch::Tensor& baseWeight, torch::ScalarType dtype,
                                  const torch::Tensor& rowMask);
// Rank dropout's mask of the delta's rows, as the forward draws it (rank_dropout_scale applied).
torch::Tensor lycorisRowMask(const LycorisAdapter& adapter, const torch::Tensor& like);

// The layer's output with the adapter: base(x) + op(x, delta) in rebuild mode (LyCORIS's default),
// computed as one product with W + delta formed at the activations' precision, and for LoCon
// through its factors as standard LoRA; or the algorithm's bypass forward. Module dropout zeroes
// the adapter's part with probability moduleDropout (a factor rather than a skipped computation,
// so captured graphs replay it).
torch::Tensor lycorisForward(const LycorisAdapter& adapter, const torch::Tensor& x, const LycorisLayer& layer, bool training);

}  // namespace sinter::models
