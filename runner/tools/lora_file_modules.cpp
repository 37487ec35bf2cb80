#include "tools/lora_file_modules.h"

#include <stdexcept>

namespace sinter::tools {

namespace {

using models::LycorisAlgo;

// The algorithm a module's tensor names say, as LyCORIS's kohya loader tells them apart; a module
// of another is refused by name.
LycorisAlgo algorithmOf(const LoraFileModule& m, const std::string& path) {
  const auto& t = m.tensors;
  if (t.has("hada_w1_a")) return LycorisAlgo::LoHa;
  if (t.has("lokr_w1") || t.has("lokr_w1_a")) return LycorisAlgo::LoKr;
  if (t.has("lora_down.weight") && t.has("lora_up.weight")) return LycorisAlgo::LoCon;
  if (t.has("diff")) return LycorisAlgo::Full;
  if (t.has("weight") && t.has("on_input")) return LycorisAlgo::IA3;
  std::string names;
  for (const std::string& n : t.names) names += (names.empty() ? "" : ", ") + n;
  std::string what = "tensors of no algorithm this build applies";
  if (t.has("oft_blocks") || t.has("oft_diag")) what = "an OFT module (not built)";
  else if (t.has("oft_R") || t.has("boft_R")) what = "a BOFT module (not built)";
  else if (t.has("a1.weight") || t.has("b1.weight")) what = "a GLoRA module (not built)";
  else if (t.has("w_norm") || t.has("b_norm")) what = "a LyCORIS norm module (not built)";
  else if (t.has("lora_down.weight") || t.has("lora_up.weight")) what = "half a LoRA module (lora_down and lora_up go together)";
  throw std::invalid_argument(path + ": module " + m.name + " holds " + what + ": " + names);
}

}  // namespace

std::map<std::string, LoraFileModule> readLoraFileModules(const std::map<std::string, torch::Tensor>& tensors,
                                                          const std::string& path, torch::Dtype dtype) {
  std::map<std::string, LoraFileModule> modules;
  for (const auto& [key, tensor] : tensors) {
    const size_t dot = key.find('.');
    if (dot == std::string::npos || dot == 0)
      throw std::invalid_argument(path + ": tensor '" + key + "' names no module (a kohya LoRA key is <module>.<tensor>)");
    LoraFileModule& m = modules[key.substr(0, dot)];
    m.name = key.substr(0, dot);
    const std::string name = key.substr(dot + 1);
    // IA3's on_input flag stays what it is; every value is read in the merge dtype.
    m.tensors.add(name, name == "on_input" || !tensor.is_floating_point() ? tensor : tensor.to(dtype), false);
  }
  for (auto& [name, m] : modules) m.algo = algorithmOf(m, path);
  return modules;
}

torch::Tensor loraModuleDelta(const LoraFileModule& module, const std::vector<int64_t>& weightShape, double ratio,
                              const torch::Tensor& baseWeight) {
  models::LycorisLayerShape shape;
  shape.out = weightShape[0];
  shape.in = weightShape[1];
  shape.kernel = weightShape.size() == 4 ? weightShape[2] : 0;
  const int64_t weightNumel = c10::multiply_integers(weightShape);
  const auto& t = module.tensors;
  // The delta's own size: what its factors make, before it is laid out as the weight.
  int64_t deltaNumel = -1;
  switch (module.algo) {
    case LycorisAlgo::LoCon: {
      const torch::Tensor& up = t.at("lora_up.weight");
      const torch::Tensor& down = t.at("lora_down.weight");
      if (up.dim() < 2 || down.dim() < 2 || up.size(1) != down.size(0))
        throw std::invalid_argument(module.name + ": lora_up " + c10::str(up.sizes()) + " and lora_down " + c10::str(down.sizes()) +
                                    " do not fit together");
      deltaNumel = up.size(0) * (down.numel() / down.size(0));
      // A 1x1-conv LoRA on a Linear (or a Linear LoRA on a 1x1 conv): the same matrix.
      if (deltaNumel == weightNumel && !t.has("lora_mid.weight") && shape.kernel <= 1) shape.kernel = 0;
      break;
    }
    case LycorisAlgo::Full: deltaNumel = t.at("diff").numel(); break;
    default: deltaNumel = weightNumel; break;  // LoHa, LoKr, IA3 are checked by their formulas
  }
  if (deltaNumel != weightNumel)
    throw std::invalid_argument(module.name + ": its " + models::lycorisAlgoName(module.algo) + " tensors make a delta of " +
                                std::to_string(deltaNumel) + " values, and the weight it names is " + c10::str(c10::IntArrayRef(weightShape)));
  torch::Tensor delta;
  if (module.algo == LycorisAlgo::Full) {
    delta = t.at("diff");
  } else {
    delta = models::lycorisDelta(module.algo, shape, t, models::lycorisScaleOf(module.algo, t), baseWeight);
  }
  delta = delta.reshape(weightShape);
  if (module.doraScale()) return models::lycorisDecomposedDelta(baseWeight, delta, t.at("dora_scale"), ratio);
  return delta * ratio;
}

}  // namespace sinter::tools
