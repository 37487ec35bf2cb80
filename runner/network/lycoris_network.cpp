// LoraNetwork's lycoris.kohya modules: attaching LyCORIS adapters by preset, their state dict as
// LyCORIS writes it, loading such files, and the exact tensors a training state keeps.
#include <cmath>
#include <sstream>

#include "network/lora_network.h"
#include "network/lycoris_targets.h"

namespace sinter::network {

namespace {

torch::Tensor baseWeightOf(const LoraModule& m) { return m.linear ? m.linear->weight : m.conv->weight; }
torch::Tensor baseBiasOf(const LoraModule& m) { return m.linear ? m.linear->bias : m.conv->bias; }

}  // namespace

size_t LoraNetwork::attachLycoris(const LoraTargetRule& rule, torch::nn::Module& root, const std::string& pathPrefix) {
  const LycorisArgs& a = *options_.args.lycoris;
  if (options_.moduleRanks)
    throw LoraError(lycorisDimFromWeightsRefusal());
  struct Candidate {
    std::string path;
    std::shared_ptr<models::LinearImpl> linear;
    std::shared_ptr<models::Conv2dImpl> conv;
  };
  std::vector<Candidate> candidates;
  std::vector<LayerPath> layers;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    auto linear = std::dynamic_pointer_cast<models::LinearImpl>(item.value());
    auto conv = linear ? nullptr : std::dynamic_pointer_cast<models::Conv2dImpl>(item.value());
    if (!linear && !conv) continue;
    candidates.push_back({pathPrefix + item.key(), linear, conv});
    layers.push_back({candidates.back().path, conv ? conv->kernelSize() : 0});
  }
  // create_network: conv_dim defaults to network_dim, conv_alpha to network_alpha; a preset
  // without enable_conv sets conv_dim to 0.
  const int64_t convDim = lycorisPresetEnablesConv(a.preset) ? a.convDim.value_or(options_.dim) : 0;
  const std::vector<bool> chosen = lycorisSelect(a.preset, rule.module, rule.component, layers, convDim);
  const double convAlpha = a.convAlpha.value_or(options_.alpha);
  size_t attached = 0;
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!chosen[i] || (rule.notInSdScriptsModel && rule.notInSdScriptsModel(c.path))) continue;
    const std::string name = loraModuleName(rule, c.path);
    if (find(name)) throw LoraError("duplicated LyCORIS module name: " + name);
    const bool conv3x3 = c.conv && c.conv->kernelSize() != 1;
    models::LycorisSettings s;
    s.algo = a.algo;
    s.dim = conv3x3 ? convDim : options_.dim;
    s.alpha = conv3x3 ? convAlpha : options_.alpha;
    if (s.dim <= 0) continue;
    s.useTucker = a.useTucker;
    s.useScalar = a.useScalar;
    s.decomposeBoth = a.decomposeBoth;
    s.factor = a.factor;
    s.doraWd = a.doraWd;

    auto adapter = std::make_shared<models::LycorisAdapter>();
    adapter->algo = a.algo;
    const torch::Tensor weight = c.linear ? c.linear->weight : c.conv->weight;
    const torch::Tensor bias = c.linear ? c.linear->bias : c.conv->bias;
    adapter->shape = c.linear ? models::LycorisLayerShape{c.linear->outFeatures(), c.linear->inFeatures(), 0, bias.defined()}
                              : models::LycorisLayerShape{c.conv->outChannels(), c.conv->inChannels(), c.conv->kernelSize(), true};
    if (c.conv) {
      adapter->stride = c.conv->stride;
      adapter->padding = c.conv->padding;
    }
    adapter->tensors = models::createLycorisTensors(s, adapter->shape, weight, bias, &adapter->scale);
    // Trained tensors in the network's dtype on the device; buffers (alpha, on_input) stay on the CPU.
    for (const std::string& n : adapter->tensors.names)
      if (adapter->tensors.trained.at(n))
        adapter->tensors.at(n) = adapter->tensors.at(n).to(options_.device, options_.dtype).set_requires_grad(true);
    adapter->multiplier = options_.multiplier;
    adapter->rankDropout = a.rankDropout;
    adapter->moduleDropout = a.moduleDropout;
    adapter->dropout = a.dropout;
    adapter->bypass = a.bypassMode;
    LoraModule m{name, c.path, rule.component, models::Linear(nullptr), models::Conv2d(nullptr), nullptr, adapter};
    if (c.linear) {
      c.linear->lycoris = adapter;
      m.linear = models::Linear(c.linear);
    } else {
      c.conv->lycoris = adapter;
      m.conv = models::Conv2d(c.conv);
    }
    modules_.push_back(std::move(m));
    ++attached;
  }
  return attached;
}

void LoraNetwork::appendLycorisState(const LoraModule& m, torch::Dtype dtype,
                                     std::vector<std::pair<std::string, torch::Tensor>>& out) const {
  // LyCORIS's save_weights casts every value, alpha and on_input included, to the save dtype.
  for (auto& [key, value] : models::lycorisStateTensors(m.lycoris->algo, m.lycoris->tensors, baseWeightOf(m), baseBiasOf(m)))
    out.emplace_back(m.name + "." + key, value.detach().to(torch::kCPU, dtype).contiguous());
}

bool LoraNetwork::loadLycorisModule(LoraModule& m, const std::map<std::string, torch::Tensor>& tensors,
                                    const std::string& source, std::map<std::string, bool>& used, LoraLoadReport& report) {
  models::LycorisAdapter& a = *m.lycoris;
  const torch::Tensor baseWeight = baseWeightOf(m), baseBias = baseBiasOf(m);
  std::vector<std::string> keys;
  for (const auto& [key, value] : models::lycorisStateTensors(a.algo, a.tensors, baseWeight, baseBias)) keys.push_back(key);
  size_t present = 0;
  for (const std::string& key : keys) present += tensors.count(m.name + "." + key);
  if (present == 0) {
    report.missing.push_back(m.name);
    return false;
  }
  for (const std::string& key : keys) {
    const std::string fileKey = m.name + "." + key;
    auto it = tensors.find(fileKey);
    if (it == tensors.end())
      throw LoraError(source + ": " + m.name + " has no " + key + ": the file's module was made with other LyCORIS settings "
                      "(algo " + models::lycorisAlgoName(a.algo) + " here; dora_wd, use_tucker, decompose_both, factor, "
                      "network_dim or conv_dim may differ)");
    const torch::Tensor& src = it->second;
    used[fileKey] = true;
    if (key == "alpha" || key == "on_input") {
      if (src.numel() != 1) throw LoraError(source + ": " + fileKey + " is not a scalar");
      torch::Tensor& dst = a.tensors.at(key);
      dst = src.reshape({}).to(torch::kCPU, dst.scalar_type()).clone();
      continue;
    }
    const std::string target = key == "diff" ? "weight" : key == "diff_b" ? "bias" : key;
    torch::Tensor& dst = a.tensors.at(target);
    if (src.sizes() != dst.sizes())
      throw LoraError(source + ": " + fileKey + " has shape " + shapeText(src.sizes()) + ", the network expects " +
                      shapeText(dst.sizes()) + " (network_dim, conv_dim, factor and the LyCORIS settings decide it)");
    torch::Tensor value = src.to(dst.device(), dst.scalar_type());
    if (key == "diff") value = value + baseWeight.detach().to(dst.device(), dst.scalar_type());
    if (key == "diff_b") value = value + baseBias.detach().to(dst.device(), dst.scalar_type());
    dst.copy_(value);
  }
  // LyCORIS's load hook: the scalar is folded into the saved tensors, so it restarts at 1.
  if (a.tensors.has("scalar")) a.tensors.at("scalar").fill_(1.0);
  const double scale = models::lycorisScaleOf(a.algo, a.tensors);
  if (std::abs(scale - a.scale) > 1e-6 * std::max(1.0, std::abs(scale)))
    report.warnings.push_back(m.name + ": alpha / dim " + std::to_string(scale) + " from the file replaces " + std::to_string(a.scale));
  a.scale = scale;
  return true;
}

std::vector<std::pair<std::string, torch::Tensor>> LoraNetwork::resumeTensors() const {
  if (!options_.args.lycoris) return stateDict(torch::kFloat32);
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const LoraModule& m : modules_)
    for (const std::string& n : m.lycoris->tensors.names)
      out.emplace_back(m.name + "." + n, m.lycoris->tensors.at(n).detach().to(torch::kCPU).clone());
  return out;
}

LoraLoadReport LoraNetwork::loadResumeTensors(const std::map<std::string, torch::Tensor>& tensors, const std::string& source) {
  if (!options_.args.lycoris) return loadStateDict(tensors, source);
  LoraLoadReport report;
  torch::NoGradGuard noGrad;
  for (LoraModule& m : modules_) {
    bool all = true;
    for (const std::string& n : m.lycoris->tensors.names) {
      auto it = tensors.find(m.name + "." + n);
      torch::Tensor& dst = m.lycoris->tensors.at(n);
      if (it == tensors.end() || it->second.sizes() != dst.sizes()) {
        all = false;
        continue;
      }
      if (m.lycoris->tensors.trained.at(n)) dst.copy_(it->second.to(dst.device(), dst.scalar_type()));
      else dst = it->second.to(dst.scalar_type()).clone();
    }
    if (all) ++report.loadedModules;
    else report.missing.push_back(m.name);
  }
  for (LoraModule& m : modules_) m.lycoris->scale = models::lycorisScaleOf(m.lycoris->algo, m.lycoris->tensors);
  return report;
}

}  // namespace sinter::network
