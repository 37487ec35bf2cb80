#pragma once
// A LoRA or LyCORIS file's modules as the tools that apply them read it (merge_lora into a
// checkpoint, svd_merge_lora): the tensors of each kohya-named module ("lora_unet_..._to_q.lora_down.weight")
// grouped under its name, the algorithm they are (sd-scripts' LoRA, or LyCORIS's LoCon, LoHa, LoKr,
// IA3, full), and the weight delta they stand for, by LyCORIS's formulas (models/adapters/lycoris_weights.h).
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "models/adapters/lycoris_weights.h"

namespace sinter::tools {

struct LoraFileModule {
  std::string name;                 // the kohya name: the keys' part before the first '.'
  models::LycorisAlgo algo = models::LycorisAlgo::LoCon;  // sd-scripts' LoRA is LoCon's lora_down/lora_up
  models::LycorisTensors tensors;   // by the names after the module's ("lora_down.weight", "hada_w1_a", "alpha")
  bool doraScale() const { return tensors.has("dora_scale"); }
  bool isPlainLora() const { return algo == models::LycorisAlgo::LoCon && !tensors.has("lora_mid.weight") && !doraScale(); }
};

// The modules of `tensors` (a file's), each in `dtype`. A module of no algorithm the tools apply
// (OFT, BOFT, GLoRA, a LyCORIS norm module) is a std::invalid_argument naming it and its tensors;
// `path` names the file in messages.
std::map<std::string, LoraFileModule> readLoraFileModules(const std::map<std::string, torch::Tensor>& tensors,
                                                          const std::string& path, torch::Dtype dtype);

// What the module adds to a weight of `weightShape` ([out, in] or [out, in, k, k]) at `ratio`:
// ratio × the delta (alpha / rank, LyCORIS's scalar folded in as saved), or for a DoRA module the
// change its decomposition makes with `ratio` as the multiplier. `baseWeight` (the weight it is
// merged into, in the module's dtype) is read by IA3, full and DoRA. A shape that does not fit is a
// std::invalid_argument naming the module. The delta of a Linear LoRA on a 1x1 convolution (or the
// other way round) takes the weight's shape, as merge_lora.py reshapes it.
torch::Tensor loraModuleDelta(const LoraFileModule& module, const std::vector<int64_t>& weightShape, double ratio,
                              const torch::Tensor& baseWeight);

}  // namespace sinter::tools
