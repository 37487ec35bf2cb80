#include "network/lora_network.h"

#include <cmath>
#include <sstream>

namespace sinter::network {

namespace {

std::string joinComma(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string shapeText(at::IntArrayRef shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

double parseRatio(const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    if (used != value.size() || !std::isfinite(v)) throw std::invalid_argument(value);
    return v;
  } catch (const std::exception&) {
    throw LoraError("network_args: " + key + "=" + value + " is not a number");
  }
}

}  // namespace

const std::vector<std::string>& supportedNetworkArgs() {
  static const std::vector<std::string> keys = {"loraplus_lr_ratio", "loraplus_unet_lr_ratio",
                                                "loraplus_text_encoder_lr_ratio", "train_blocks"};
  return keys;
}

LoraNetworkArgs parseNetworkArgs(const std::vector<std::string>& args) {
  LoraNetworkArgs parsed;
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw LoraError("network_args: '" + arg + "' is not key=value");
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (key == "loraplus_lr_ratio") {
      parsed.loraplusLrRatio = parseRatio(key, value);
    } else if (key == "loraplus_unet_lr_ratio") {
      parsed.loraplusUnetLrRatio = parseRatio(key, value);
    } else if (key == "loraplus_text_encoder_lr_ratio") {
      parsed.loraplusTextEncoderLrRatio = parseRatio(key, value);
    } else if (key == "train_blocks") {
      if (value != "all" && value != "double" && value != "single")
        throw LoraError("network_args: train_blocks='" + value + "' is not one of all, double, single");
      parsed.trainBlocks = value;
    } else {
      throw LoraError("network_args: '" + key + "' is not supported by this build of networks.lora (supported: " +
                      joinComma(supportedNetworkArgs()) + ")");
    }
    parsed.raw.emplace_back(key, value);
  }
  return parsed;
}

LoraNetwork::LoraNetwork(LoraNetworkOptions options) : options_(std::move(options)) {
  if (!options_.moduleRanks && options_.dim <= 0)
    throw LoraError("network_dim must be at least 1 (got " + std::to_string(options_.dim) + ")");
  if (options_.dropout < 0.0 || options_.dropout >= 1.0)
    throw LoraError("network_dropout must be in [0, 1) (got " + std::to_string(options_.dropout) + ")");
}

LoraNetwork::~LoraNetwork() = default;

int64_t LoraNetwork::rankFor(const std::string& name, double* alpha) const {
  if (options_.moduleRanks) {
    auto it = options_.moduleRanks->find(name);
    if (it == options_.moduleRanks->end()) return 0;
    *alpha = it->second.alpha;
    return it->second.rank;
  }
  *alpha = options_.alpha;
  return options_.dim;
}

size_t LoraNetwork::attach(const LoraTargetRule& rule, torch::nn::Module& root, const std::string& pathPrefix) {
  const LoraComponent component = rule.component;
  std::vector<std::pair<std::string, std::shared_ptr<models::LinearImpl>>> linears;
  std::vector<std::string> linearPaths;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    if (auto linear = std::dynamic_pointer_cast<models::LinearImpl>(item.value())) {
      linears.emplace_back(pathPrefix + item.key(), linear);
      linearPaths.push_back(pathPrefix + item.key());
    }
  }
  const std::vector<bool> chosen = rule.select(linearPaths);

  size_t attached = 0;
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < linears.size(); ++i) {
    if (!chosen[i]) continue;
    const auto& [path, linear] = linears[i];
    const std::string name = kohyaLoraName(component, path);
    if (find(name)) throw LoraError("duplicated LoRA module name: " + name);
    double alpha = 0.0;
    const int64_t rank = rankFor(name, &alpha);
    if (rank <= 0) continue;  // dim_from_weights: not in the file
    if (alpha == 0.0) alpha = static_cast<double>(rank);

    auto adapter = std::make_shared<models::LoraAdapter>();
    // Same initialisation as sd-scripts (and Microsoft's LoRA): Kaiming-uniform down, zero up.
    torch::Tensor down = torch::empty({rank, linear->inFeatures()}, torch::kFloat32);
    torch::nn::init::kaiming_uniform_(down, std::sqrt(5.0));
    adapter->down = down.to(options_.device, options_.dtype).set_requires_grad(true);
    adapter->up = torch::zeros({linear->outFeatures(), rank}, torch::TensorOptions(options_.dtype).device(options_.device))
                      .set_requires_grad(true);
    adapter->alpha = alpha;
    adapter->dropout = options_.dropout;
    adapter->multiplier = options_.multiplier;
    linear->lora = adapter;
    modules_.push_back({name, path, component, models::Linear(linear), adapter});
    ++attached;
  }
  return attached;
}

void LoraNetwork::detach() {
  for (LoraModule& m : modules_) m.linear->lora.reset();
  modules_.clear();
}

size_t LoraNetwork::moduleCount(LoraComponent component) const {
  size_t n = 0;
  for (const LoraModule& m : modules_) n += m.component == component;
  return n;
}

const LoraModule* LoraNetwork::find(const std::string& name) const {
  for (const LoraModule& m : modules_)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<torch::Tensor> LoraNetwork::parameters() const {
  std::vector<torch::Tensor> params;
  params.reserve(modules_.size() * 2);
  for (const LoraModule& m : modules_) {
    params.push_back(m.adapter->down);
    params.push_back(m.adapter->up);
  }
  return params;
}

int64_t LoraNetwork::parameterCount() const {
  int64_t n = 0;
  for (const torch::Tensor& p : parameters()) n += p.numel();
  return n;
}

std::vector<LoraParamGroup> LoraNetwork::parameterGroups(std::optional<double> textEncoderLr,
                                                         std::optional<double> unetLr, double defaultLr) const {
  const LoraNetworkArgs& a = options_.args;
  auto assemble = [&](bool unet, double lr, std::optional<double> ratio, std::vector<LoraParamGroup>& out) {
    LoraParamGroup plain{unet ? "unet" : "textencoder", lr, {}};
    LoraParamGroup plus{unet ? "unet plus" : "textencoder plus", ratio ? lr * *ratio : lr, {}};
    for (const LoraModule& m : modules_) {
      if ((m.component == LoraComponent::Unet) != unet) continue;
      plain.params.push_back(m.adapter->down);
      (ratio ? plus : plain).params.push_back(m.adapter->up);
    }
    for (LoraParamGroup* g : {&plain, &plus})
      if (!g->params.empty() && g->lr != 0.0) out.push_back(std::move(*g));
  };
  std::vector<LoraParamGroup> groups;
  assemble(false, textEncoderLr.value_or(defaultLr),
           a.loraplusTextEncoderLrRatio ? a.loraplusTextEncoderLrRatio : a.loraplusLrRatio, groups);
  assemble(true, unetLr.value_or(defaultLr), a.loraplusUnetLrRatio ? a.loraplusUnetLrRatio : a.loraplusLrRatio,
           groups);
  return groups;
}

void LoraNetwork::setMultiplier(double multiplier) {
  options_.multiplier = multiplier;
  for (LoraModule& m : modules_) m.adapter->multiplier = multiplier;
}

void LoraNetwork::setTraining(bool training) {
  for (LoraModule& m : modules_) m.linear->train(training);
}

std::vector<std::pair<std::string, torch::Tensor>> LoraNetwork::stateDict(torch::Dtype dtype) const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  out.reserve(modules_.size() * 3);
  torch::NoGradGuard noGrad;
  for (const LoraModule& m : modules_) {
    // sd-scripts registers alpha as a buffer (a 0-dim tensor), saved in save_precision too.
    out.emplace_back(m.name + ".alpha", torch::tensor(static_cast<float>(m.adapter->alpha)).to(dtype));
    out.emplace_back(m.name + ".lora_down.weight", m.adapter->down.detach().to(torch::kCPU, dtype).contiguous());
    out.emplace_back(m.name + ".lora_up.weight", m.adapter->up.detach().to(torch::kCPU, dtype).contiguous());
  }
  return out;
}

LoraLoadReport LoraNetwork::loadStateDict(const std::map<std::string, torch::Tensor>& tensors,
                                          const std::string& source) {
  LoraLoadReport report;
  torch::NoGradGuard noGrad;
  std::map<std::string, bool> used;
  for (const auto& kv : tensors) used[kv.first] = false;

  auto copyInto = [&](const std::string& key, torch::Tensor& dst) {
    const torch::Tensor& src = tensors.at(key);
    if (src.sizes() != dst.sizes())
      throw LoraError(source + ": " + key + " has shape " + shapeText(src.sizes()) + ", the network expects " +
                      shapeText(dst.sizes()) +
                      " (network_dim " + std::to_string(options_.dim) +
                      "; dim_from_weights takes the rank from the file)");
    dst.copy_(src.to(dst.device(), dst.scalar_type()));
    used[key] = true;
  };

  for (LoraModule& m : modules_) {
    const std::string downKey = m.name + ".lora_down.weight";
    const std::string upKey = m.name + ".lora_up.weight";
    const std::string alphaKey = m.name + ".alpha";
    const bool hasDown = tensors.count(downKey) > 0, hasUp = tensors.count(upKey) > 0;
    if (!hasDown && !hasUp) {
      report.missing.push_back(m.name);
      continue;
    }
    if (hasDown != hasUp)
      throw LoraError(source + ": " + m.name + " has only " + (hasDown ? downKey : upKey) + ", not both weights");
    copyInto(downKey, m.adapter->down);
    copyInto(upKey, m.adapter->up);
    if (tensors.count(alphaKey)) {
      const torch::Tensor& a = tensors.at(alphaKey);
      if (a.numel() != 1) throw LoraError(source + ": " + alphaKey + " is not a scalar");
      const double fileAlpha = a.to(torch::kFloat64).item<double>();
      if (std::abs(fileAlpha - m.adapter->alpha) > 1e-6 * std::max(1.0, std::abs(fileAlpha)))
        report.warnings.push_back(m.name + ": alpha " + std::to_string(fileAlpha) + " from the file replaces " +
                                  std::to_string(m.adapter->alpha));
      m.adapter->alpha = fileAlpha;
      used[alphaKey] = true;
    }
    ++report.loadedModules;
  }
  for (const auto& [key, wasUsed] : used)
    if (!wasUsed) report.unexpected.push_back(key);
  return report;
}

}  // namespace sinter::network
