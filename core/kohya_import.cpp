#include "core/kohya_import.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/argv.h"
#include "core/atomic_file.h"
#include "core/registry.h"
#include "core/utf8.h"

namespace sinter {

using nlohmann::json;

namespace {

// kohya_ss GUI keys that carry a registry option under another name.
const std::map<std::string, std::string>& renames() {
  static const std::map<std::string, std::string> m{
      {"optimizer", "optimizer_type"},
      {"max_resolution", "resolution"},
      {"epoch", "max_train_epochs"},
      {"sdxl_cache_text_encoder_outputs", "cache_text_encoder_outputs"},
      {"learning_rate_te", "text_encoder_lr"},
      {"train_dir", "output_dir"},
      {"image_folder", "train_data_dir"},
      {"flux1_cache_text_encoder_outputs", "cache_text_encoder_outputs"},
      {"flux1_cache_text_encoder_outputs_to_disk", "cache_text_encoder_outputs_to_disk"},
  };
  return m;
}

// Keys handled specially below, or meaningful only with a LoRA_type that is reported unmapped.
const std::set<std::string>& handledKeys() {
  static const std::set<std::string> s{"LoRA_type", "sdxl", "v2", "flux1_checkbox", "xformers", "lr_warmup",
                                       "additional_parameters", "model_list", "conv_dim", "conv_alpha",
                                       "LyCORIS_preset", "num_processes", "num_machines", "multi_gpu"};
  return s;
}

// A kohya_ss JSON value is "empty" when the GUI would not pass it on: "", null, false, 0.
bool isEmptyish(const json& v) {
  if (v.is_null()) return true;
  if (v.is_string()) return v.get<std::string>().empty();
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number()) return v.get<double>() == 0.0;
  if (v.is_array()) return v.empty();
  return false;
}

// Converts a kohya_ss JSON value (numbers are often strings there) to the option's type.
std::string convert(const OptionSpec& spec, const json& v, Value& out) {
  Value raw;
  switch (spec.type) {
    case OptionType::Bool:
      if (v.is_boolean()) raw = v.get<bool>();
      else if (v.is_string() && (v == "true" || v == "false")) raw = v == "true";
      else return "expected true or false";
      break;
    case OptionType::Int: {
      double d;
      if (v.is_number()) d = v.get<double>();
      else if (v.is_string()) {
        try {
          std::size_t used = 0;
          d = std::stod(v.get<std::string>(), &used);
          if (used != v.get<std::string>().size()) return "not a number: " + v.dump();
        } catch (...) {
          return "not a number: " + v.dump();
        }
      } else return "expected a number";
      if (d != std::floor(d)) return "expected an integer, got " + v.dump();
      raw = static_cast<long long>(d);
      break;
    }
    case OptionType::Float:
      if (v.is_number_integer()) raw = v.get<long long>();
      else if (v.is_number()) raw = v.get<double>();
      else if (v.is_string()) {
        try {
          raw = std::stod(v.get<std::string>());
        } catch (...) {
          return "not a number: " + v.dump();
        }
      } else return "expected a number";
      break;
    case OptionType::List:
      if (v.is_string()) {
        StringList items;
        std::istringstream ss(v.get<std::string>());
        for (std::string item; ss >> item;) items.push_back(item);
        raw = items;
      } else if (v.is_array()) {
        StringList items;
        for (const auto& item : v) items.push_back(item.is_string() ? item.get<std::string>() : item.dump());
        raw = items;
      } else return "expected a list";
      break;
    default:
      if (v.is_string()) raw = v.get<std::string>();
      else if (v.is_number_integer()) raw = std::to_string(v.get<long long>());
      else return "expected text";
  }
  return checkValue(spec, raw, out);
}

}  // namespace

KohyaImportResult importKohyaJson(const std::string& text, const std::string& fileName) {
  auto fail = [&](const std::string& msg) -> KohyaImportResult {
    throw ConfigError({Diagnostic{Severity::Error, SourceLocation{fileName, 0, 0}, "", msg}});
  };
  if (!checkUtf8(text).valid) fail("the file is not valid UTF-8");
  json root = json::parse(text, nullptr, false);
  if (root.is_discarded()) {
    try {
      json strict = json::parse(text);  // throws, with the position of the problem
      (void)strict;
    } catch (const json::parse_error& e) {
      fail(std::string("not a kohya_ss JSON config: ") + e.what());
    }
  }
  if (!root.is_object()) fail("not a kohya_ss JSON config: the top level is not an object");

  KohyaImportResult r;
  Config& c = r.config;

  // Family and training type.
  auto flag = [&](const char* k) { return root.contains(k) && root[k].is_boolean() && root[k].get<bool>(); };
  std::optional<Family> family;
  if (flag("flux1_checkbox")) family = Family::FLUX;
  else if (flag("sdxl")) family = Family::SDXL;
  else if (flag("v2")) family = Family::SD2;
  else if (root.contains("sdxl") || root.contains("v2")) family = Family::SD15;
  if (family) c.set("model_family", std::string(toString(*family)));

  if (root.contains("LoRA_type")) {
    c.set("training_type", std::string("lora"));
    const std::string type = root["LoRA_type"].is_string() ? root["LoRA_type"].get<std::string>() : "";
    if (type == "Standard" || type.empty()) {
      c.set("network_module", std::string("networks.lora"));
    } else if (type == "Flux1") {
      c.set("network_module", std::string("networks.lora_flux"));
    } else {
      r.unmapped.push_back("LoRA_type: \"" + type + "\" is not supported (Sinter trains standard LoRA)");
    }
  } else if (root.contains("train_dir") || root.contains("image_folder") || root.contains("in_json")) {
    c.set("training_type", std::string("finetune"));
  } else {
    c.set("training_type", std::string("dreambooth"));
  }
  const Tab tab = c.tab();

  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (handledKeys().count(key)) continue;
    std::string target = key;
    if (auto rn = renames().find(key); rn != renames().end()) target = rn->second;
    const OptionSpec* spec = findOption(target);
    if (!spec || key == "model_family" || key == "training_type") {
      if (!isEmptyish(v)) r.unmapped.push_back(key + ": no Sinter option (value " + v.dump() + ")");
      continue;
    }
    // kohya_ss treats "" and null as "not set", and 0 too for options that have no default.
    if (v.is_string() && v.get<std::string>().empty()) continue;
    if (v.is_null() || (isEmptyish(v) && isUnset(spec->defaultValue))) continue;
    if ((family && !spec->appliesToFamily(*family)) || !spec->appliesToTab(tab)) {
      if (!isEmptyish(v)) r.notes.push_back(key + ": not used for this model family or training type");
      continue;
    }
    Value out;
    if (std::string err = convert(*spec, v, out); !err.empty()) {
      r.unmapped.push_back(key + ": " + err);
      continue;
    }
    c.set(target, out, SourceLocation{fileName, 0, 0});
    if (target != key) r.notes.push_back(key + " -> " + target);
  }

  // kohya_ss spells the attention choice as one field.
  if (root.contains("xformers") && root["xformers"].is_string()) {
    const std::string x = root["xformers"].get<std::string>();
    if (x == "xformers") c.set("xformers", true);
    else if (x == "sdpa") c.set("sdpa", true);
  }
  // lr_warmup is a percentage of the total steps in the GUI; sd-scripts takes a ratio below 1.
  if (root.contains("lr_warmup") && root["lr_warmup"].is_number() && root["lr_warmup"].get<double>() > 0) {
    const double pct = root["lr_warmup"].get<double>();
    if (pct < 100) {
      c.set("lr_warmup_steps", pct / 100.0);
      r.notes.push_back("lr_warmup " + formatDouble(pct) + "% -> lr_warmup_steps " + formatDouble(pct / 100.0));
    } else {
      r.unmapped.push_back("lr_warmup: " + formatDouble(pct) + "% is not below 100%");
    }
  }
  // accelerate launch's settings: the processes of one machine are the app's GPUs setting; several
  // machines start their workers with torchrun's environment, which a config cannot say.
  if (root.contains("num_processes")) {
    const json& n = root["num_processes"];
    int processes = 0;
    if (n.is_number_integer()) processes = n.get<int>();
    else if (n.is_string() && !n.get<std::string>().empty() && n.get<std::string>().find_first_not_of("0123456789") == std::string::npos)
      processes = std::stoi(n.get<std::string>());
    if (processes >= 1 && processes <= 16) {
      r.processes = processes;
      if (processes > 1) r.notes.push_back("num_processes " + std::to_string(processes) + " -> GPUs " + std::to_string(processes));
    } else if (!isEmptyish(n)) {
      r.unmapped.push_back("num_processes: " + n.dump() + " is not a number of GPUs from 1 to 16");
    }
  }
  if (root.contains("num_machines") && root["num_machines"].is_number() && root["num_machines"].get<double>() > 1)
    r.unmapped.push_back("num_machines: " + root["num_machines"].dump() +
                         " machines: start sinter-runner on each with torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, ...)");
  // Extra command-line parameters typed into the GUI.
  if (root.contains("additional_parameters") && root["additional_parameters"].is_string()) {
    std::istringstream ss(root["additional_parameters"].get<std::string>());
    std::vector<std::string> args;
    for (std::string a; ss >> a;) args.push_back(a);
    // Parse each option separately so one unknown flag does not lose the rest.
    for (std::size_t i = 0; i < args.size();) {
      std::size_t j = i + 1;
      while (j < args.size() && args[j].rfind("--", 0) != 0) ++j;
      std::vector<std::string> one(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(j));
      try {
        c.overlay(parseArgv(one).overrides);
        r.notes.push_back("additional_parameters: " + one.front());
      } catch (const ConfigError& e) {
        r.unmapped.push_back("additional_parameters: " + std::string(e.what()));
      }
      i = j;
    }
  }
  return r;
}

KohyaImportResult importKohyaJsonFile(const std::string& path) {
  std::string text;
  try {
    text = readWholeFile(path);
  } catch (const std::exception& e) {
    throw ConfigError({Diagnostic{Severity::Error, SourceLocation{path, 0, 0}, "", e.what()}});
  }
  return importKohyaJson(text, path);
}

}  // namespace sinter
