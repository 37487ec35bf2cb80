#include "train/loop/resume_settings.h"

#include <map>
#include <set>

#include "core/ascii_text.h"
#include "core/registry.h"
#include "network/lora_network.h"
#include "train/base/run_errors.h"
#include "train/methods/lora_method.h"

namespace sinter::train {

namespace {

std::string shown(const nlohmann::json& j) {
  if (j.is_null()) return "(unset)";
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number_integer()) return std::to_string(j.get<long long>());
  if (j.is_number()) return formatDouble(j.get<double>());
  if (j.is_array()) {
    std::string out;
    for (const auto& item : j) out += (out.empty() ? "" : " ") + shown(item);
    return out;
  }
  return j.dump();
}

// Why a state cannot continue with another value of these: what it holds was made for the old one.
const std::map<std::string, std::string>& uncarriedOptions() {
  static const std::map<std::string, std::string> reasons = {
      {"model_family", "the state's weights belong to the other model family"},
      {"model_type", "the state's weights belong to the other model type"},
      {"training_type", "the state holds the other method's trained weights (a LoRA or the full model)"},
      {"network_module", "the state holds the other network's tensors"},
      {"network_dim", "the state's LoRA has the other rank; resize_lora changes a LoRA's rank, network_weights starts a new run from it"},
      {"network_alpha", "the state's LoRA was trained at the other scale (alpha / rank)"},
      {"optimizer_type", "the state holds the other optimizer's moments (optimizer.safetensors), which do not fit this one"},
      {"network_train_unet_only", "the state trains other parts (its network.safetensors holds their tensors)"},
      {"network_train_text_encoder_only", "the state trains other parts (its network.safetensors holds their tensors)"},
      {"train_text_encoder", "the state trains other parts (its saved weights and moments are theirs)"},
  };
  return reasons;
}

// network_args entries that shape the network's tensors (which modules, their ranks and factors).
bool shapesTheNetwork(const std::string& name) {
  static const std::set<std::string> names = {"algo",        "preset",      "factor",       "use_tucker", "use_scalar",
                                              "decompose_both", "full_matrix", "dora_wd",     "train_t5xxl", "emb_dims"};
  for (const char* tail : {"_dim", "_dims", "_alpha", "_alphas", "_indices"})
    if (endsWith(name, tail)) return true;
  return names.count(name) > 0;
}

// network_args as its network reads them: name to value (networks.lora / lycoris.kohya's split).
std::map<std::string, std::string> networkArgItems(const nlohmann::json& list, const nlohmann::json& module) {
  std::map<std::string, std::string> items;
  if (!list.is_array()) return items;
  const std::vector<std::string> args = list.get<std::vector<std::string>>();
  for (const auto& [key, value] : network::parseNetworkArgs(args, module.is_string() ? module.get<std::string>() : "").raw) items[key] = value;
  return items;
}

bool sameOptimizer(const nlohmann::json& a, const nlohmann::json& b) {
  // Unset is sd-scripts' default, AdamW; the names are case-insensitive.
  auto name = [](const nlohmann::json& j) { return j.is_string() ? lowerAscii(j.get<std::string>()) : std::string("adamw"); };
  return name(a) == name(b);
}

}  // namespace

nlohmann::json settingsJson(const Config& config) {
  nlohmann::json out = nlohmann::json::object();
  for (const OptionSpec& spec : optionRegistry())
    if (config.isSet(spec.key)) out[spec.key] = configOptionAsJson(config, spec.key);
  return out;
}

std::vector<SettingChange> settingChanges(const nlohmann::json& saved, const Config& now) {
  std::vector<SettingChange> changes;
  const nlohmann::json current = settingsJson(now);
  auto at = [](const nlohmann::json& j, const std::string& key) { return j.contains(key) ? j.at(key) : nlohmann::json(); };
  for (const OptionSpec& spec : optionRegistry()) {
    const std::string key = spec.key;
    if (key == "resume") continue;
    const nlohmann::json was = at(saved, key), is = at(current, key);
    if (key == "network_args") {
      const auto a = networkArgItems(was, at(saved, "network_module")), b = networkArgItems(is, at(current, "network_module"));
      std::set<std::string> names;
      for (const auto& [k, v] : a) names.insert(k);
      for (const auto& [k, v] : b) names.insert(k);
      for (const std::string& name : names) {
        const std::string x = a.count(name) ? a.at(name) : "(unset)", y = b.count(name) ? b.at(name) : "(unset)";
        if (x == y) continue;
        changes.push_back({key + "." + name, x, y,
                           shapesTheNetwork(name) ? "it shapes the network's tensors, which the state holds as they were" : ""});
      }
      continue;
    }
    if (was == is) continue;
    if (key == "optimizer_type" && sameOptimizer(was, is)) continue;
    SettingChange c{key, shown(was), shown(is), ""};
    const auto reason = uncarriedOptions().find(key);
    // model_family "auto" is whatever the checkpoint is; the checkpoint's own change is the model's.
    const bool autoFamily = key == "model_family" && (c.was == "auto" || c.now == "auto");
    if (reason != uncarriedOptions().end() && !autoFamily) c.refusal = reason->second;
    changes.push_back(c);
  }
  return changes;
}

void refuseUncarriedSettings(const nlohmann::json& progress, const Config& now, const std::string& stateFile) {
  if (!progress.contains("settings") || !progress.at("settings").is_object()) return;
  std::string refused;
  for (const SettingChange& c : settingChanges(progress.at("settings"), now))
    if (!c.refusal.empty()) refused += "\n  " + c.key + ": " + c.was + " in the state, " + c.now + " now: " + c.refusal;
  if (!refused.empty())
    throw InputError("resume: " + stateFile + " cannot continue with these changes (start a new run, or set them back):" + refused);
}

std::vector<std::string> describeSettingChanges(const nlohmann::json& progress, const Config& now) {
  std::vector<std::string> lines;
  if (!progress.contains("settings") || !progress.at("settings").is_object()) return lines;
  for (const SettingChange& c : settingChanges(progress.at("settings"), now))
    if (c.refusal.empty()) lines.push_back(c.key + ": " + c.was + " -> " + c.now);
  return lines;
}

}  // namespace sinter::train
