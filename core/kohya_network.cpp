#include "core/kohya_network.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/kohya_defaults.h"
#include "core/registry.h"

namespace sinter {

using nlohmann::json;

namespace {

// What one field contributes to network_args: kohya_ss prints " key=value" into one string, drops
// double quotes and splits on whitespace, so a value with spaces becomes several tokens.
struct FieldArgs {
  std::string field;  // the kohya_ss key it comes from; "" for the type's own constants (algo=...)
  std::vector<std::string> tokens;
  std::string note;   // said after the carried line
};

struct NetworkPlan {
  std::string module;
  std::vector<FieldArgs> args;
  std::set<std::string> read;  // every field the type reads, passed on or not
};

// GUI defaults of the network fields kohya_ss reads when a file lacks them (lora_gui.py's controls).
const json& networkFieldDefault(const std::string& key) {
  static const std::map<std::string, json> defaults{
      {"bypass_mode", false},  {"dora_wd", false},      {"use_cp", false},          {"use_tucker", false},
      {"use_scalar", false},   {"rank_dropout_scale", false}, {"constrain", 0.0},   {"rescaled", false},
      {"train_norm", false},   {"decompose_both", false}, {"rank_dropout", 0},      {"module_dropout", 0.0},
      {"split_qkv", false},    {"train_t5xxl", false},  {"split_mode", false},      {"train_lora_ggpo", false},
      {"enable_all_linear", false}};
  static const json null;
  if (const json* d = kohyaGuiDefault(key)) return *d;
  auto it = defaults.find(key);
  return it == defaults.end() ? null : it->second;
}

json fieldValue(const KohyaImportContext& ctx, const std::string& key) {
  const json& v = ctx.value(key);
  return v.is_null() ? networkFieldDefault(key) : v;
}

// Python's truth test, which kohya_ss applies to most network fields before passing them on.
bool pythonTruthy(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_string()) return !v.get<std::string>().empty();
  return !v.empty();
}

std::vector<std::string> splitTokens(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

void addArg(NetworkPlan& plan, const std::string& field, const std::string& name, const std::string& value,
            std::string note = {}) {
  std::vector<std::string> tokens = splitTokens(name + "=" + value);
  if (!tokens.empty()) plan.args.push_back({field, std::move(tokens), std::move(note)});
}

// " key=value" for each field in `fields` that is truthy (kohya_ss's kohya_lora_var_list loops).
void addTruthy(NetworkPlan& plan, const KohyaImportContext& ctx, const std::vector<std::string>& fields) {
  for (const std::string& f : fields) {
    plan.read.insert(f);
    const json v = fieldValue(ctx, f);
    if (pythonTruthy(v)) addArg(plan, f, f, pythonText(v));
  }
}

// lycoris.kohya's templates: every field printed, whatever its value. "=text" is a constant.
void addTemplate(NetworkPlan& plan, const KohyaImportContext& ctx,
                 const std::vector<std::pair<std::string, std::string>>& entries) {
  for (const auto& [name, source] : entries) {
    if (!source.empty() && source[0] == '=') {
      addArg(plan, "", name, source.substr(1));
    } else {
      plan.read.insert(source);
      addArg(plan, source, name, pythonText(fieldValue(ctx, source)));
    }
  }
}

const std::vector<std::string>& kohyaBlockFields() {
  static const std::vector<std::string> f{"down_lr_weight", "mid_lr_weight",  "up_lr_weight",    "block_lr_zero_threshold",
                                          "block_dims",     "block_alphas",   "conv_block_dims", "conv_block_alphas"};
  return f;
}

NetworkPlan planFor(const std::string& type, const KohyaImportContext& ctx, bool sd3, bool flux) {
  NetworkPlan plan;
  using E = std::vector<std::pair<std::string, std::string>>;
  const E common{{"preset", "LyCORIS_preset"}, {"conv_dim", "conv_dim"}, {"conv_alpha", "conv_alpha"}};
  auto lycoris = [&](const E& rest) {
    plan.module = "lycoris.kohya";
    E all = common;
    all.insert(all.end(), rest.begin(), rest.end());
    addTemplate(plan, ctx, all);
    // What LyCORIS's create_network makes of some of them (kohya_ss's runs and Sinter's alike).
    for (FieldArgs& a : plan.args) {
      const std::string key = a.tokens.empty() ? "" : a.tokens.front().substr(0, a.tokens.front().find('='));
      if (key == "rank_dropout_scale" || key == "train_on_input")
        a.note = "lycoris.kohya's create_network does not read it: it changes nothing";
      else if (key == "decompose_both")
        a.note = "LyCORIS tests the value as a string, so decompose_both=False decomposes LoKr's w1 too";
    }
  };
  if (type == "LyCORIS/BOFT") {
    lycoris({{"module_dropout", "module_dropout"}, {"use_tucker", "use_tucker"}, {"rank_dropout", "rank_dropout"},
             {"rank_dropout_scale", "rank_dropout_scale"}, {"algo", "=boft"}, {"train_norm", "train_norm"}});
  } else if (type == "LyCORIS/Diag-OFT") {
    lycoris({{"module_dropout", "module_dropout"}, {"use_tucker", "use_tucker"}, {"rank_dropout", "rank_dropout"},
             {"rank_dropout_scale", "rank_dropout_scale"}, {"constraint", "constrain"}, {"rescaled", "rescaled"},
             {"algo", "=diag-oft"}, {"train_norm", "train_norm"}});
  } else if (type == "LyCORIS/DyLoRA") {
    lycoris({{"use_tucker", "use_tucker"}, {"block_size", "unit"}, {"rank_dropout", "rank_dropout"},
             {"module_dropout", "module_dropout"}, {"algo", "=dylora"}, {"train_norm", "train_norm"}});
  } else if (type == "LyCORIS/GLoRA") {
    lycoris({{"use_tucker", "use_tucker"}, {"rank_dropout", "rank_dropout"}, {"module_dropout", "module_dropout"},
             {"rank_dropout_scale", "rank_dropout_scale"}, {"algo", "=glora"}, {"train_norm", "train_norm"}});
  } else if (type == "LyCORIS/iA3") {
    lycoris({{"train_on_input", "train_on_input"}, {"algo", "=ia3"}});
  } else if (type == "LoCon" || type == "LyCORIS/LoCon" || type == "LyCORIS/LoHa") {
    lycoris({{"use_tucker", "use_tucker"}, {"rank_dropout", "rank_dropout"}, {"bypass_mode", "bypass_mode"},
             {"dora_wd", "dora_wd"}, {"module_dropout", "module_dropout"}, {"use_tucker", "use_tucker"},
             {"use_scalar", "use_scalar"}, {"rank_dropout_scale", "rank_dropout_scale"},
             {"algo", type == "LyCORIS/LoHa" ? "=loha" : "=locon"}, {"train_norm", "train_norm"}});
  } else if (type == "LyCORIS/LoKr") {
    lycoris({{"use_tucker", "use_tucker"}, {"rank_dropout", "rank_dropout"}, {"bypass_mode", "bypass_mode"},
             {"dora_wd", "dora_wd"}, {"module_dropout", "module_dropout"}, {"factor", "factor"}, {"use_cp", "use_cp"},
             {"use_scalar", "use_scalar"}, {"decompose_both", "decompose_both"},
             {"rank_dropout_scale", "rank_dropout_scale"}, {"algo", "=lokr"}, {"train_norm", "train_norm"}});
  } else if (type == "LyCORIS/Native Fine-Tuning") {
    plan.module = "lycoris.kohya";
    addTemplate(plan, ctx, {{"preset", "LyCORIS_preset"}, {"rank_dropout", "rank_dropout"}, {"module_dropout", "module_dropout"},
                            {"rank_dropout_scale", "rank_dropout_scale"}, {"algo", "=full"}, {"train_norm", "train_norm"}});
  } else if (type == "Flux1") {
    plan.module = "networks.lora_flux";
    std::vector<std::string> fields;
    plan.read.insert("train_lora_ggpo");
    if (pythonTruthy(fieldValue(ctx, "train_lora_ggpo"))) fields = {"ggpo_sigma", "ggpo_beta"};
    for (const char* f : {"img_attn_dim", "img_mlp_dim", "img_mod_dim", "single_dim", "txt_attn_dim", "txt_mlp_dim",
                          "txt_mod_dim", "single_mod_dim", "in_dims"})
      fields.push_back(f);
    addTruthy(plan, ctx, fields);
    // kohya_ss passes "all" for the block indices; that is sd-scripts' default, every block.
    for (const char* f : {"train_double_block_indices", "train_single_block_indices"}) {
      plan.read.insert(f);
      const json v = fieldValue(ctx, f);
      if (pythonTruthy(v) && pythonText(v) != "all") addArg(plan, f, f, pythonText(v));
    }
    plan.read.insert("split_mode");
    plan.read.insert("train_blocks");
    const std::string blocks = pythonText(fieldValue(ctx, "train_blocks"));
    if (pythonTruthy(fieldValue(ctx, "split_mode"))) {
      addArg(plan, "split_mode", "train_blocks", "single", "split_mode itself only saves memory");
    } else if (ctx.has("train_blocks") && blocks != "all" && !blocks.empty()) {
      addArg(plan, "train_blocks", "train_blocks", blocks,
             "kohya_ss's GUI passes train_blocks only with split_mode, so its own runs of this file train all blocks");
    }
    plan.read.insert("split_qkv");
    if (pythonTruthy(fieldValue(ctx, "split_qkv"))) addArg(plan, "split_qkv", "split_qkv", "True");
    plan.read.insert("train_t5xxl");
    if (pythonTruthy(fieldValue(ctx, "train_t5xxl")) && flux) addArg(plan, "train_t5xxl", "train_t5xxl", "True");
    for (const char* f : {"rank_dropout", "module_dropout"}) {
      plan.read.insert(f);
      const json v = fieldValue(ctx, f);
      if (v.is_number() ? v.get<double>() > 0 : pythonTruthy(v)) addArg(plan, f, f, pythonText(v));
    }
  } else if (type == "Flux1 OFT") {
    plan.module = "networks.oft_flux";
    addTruthy(plan, ctx, {"enable_all_linear"});
  } else if (type == "HunyuanImage-2.1" || type == "Anima" || type == "Lumina") {
    plan.module = type == "Anima" ? "networks.lora_anima" : type == "Lumina" ? "networks.lora_lumina" : "networks.lora_hunyuan_image";
    for (const char* f : {"rank_dropout", "module_dropout"}) {
      plan.read.insert(f);
      const json v = fieldValue(ctx, f);
      if (v.is_number() ? v.get<double>() > 0 : pythonTruthy(v)) addArg(plan, f, f, pythonText(v));
    }
  } else if (type == "Kohya LoHa" || type == "Kohya LoKr") {
    // build_native_loha_lokr_network_args: only values off their defaults.
    const bool lokr = type == "Kohya LoKr";
    plan.module = lokr ? "networks.lokr" : "networks.loha";
    for (const char* f : {"conv_dim", "conv_alpha", "use_tucker", "factor", "rank_dropout", "module_dropout"}) plan.read.insert(f);
    const json convDim = fieldValue(ctx, "conv_dim");
    if (convDim.is_number() && convDim.get<double>() > 0) {
      addArg(plan, "conv_dim", "conv_dim", std::to_string(static_cast<long long>(convDim.get<double>())));
      const json alpha = fieldValue(ctx, "conv_alpha");
      if (!alpha.is_null()) addArg(plan, "conv_alpha", "conv_alpha", pythonText(alpha));
    }
    if (pythonTruthy(fieldValue(ctx, "use_tucker"))) addArg(plan, "use_tucker", "use_tucker", "True");
    const json factor = fieldValue(ctx, "factor");
    if (lokr && factor.is_number() && factor.get<double>() != -1)
      addArg(plan, "factor", "factor", std::to_string(static_cast<long long>(factor.get<double>())));
    for (const char* f : {"rank_dropout", "module_dropout"}) {
      const json v = fieldValue(ctx, f);
      if (v.is_number() && v.get<double>() > 0) addArg(plan, f, f, pythonText(v));
    }
  } else if (type == "Kohya DyLoRA") {
    plan.module = "networks.dylora";
    std::vector<std::string> fields{"conv_dim", "conv_alpha"};
    fields.insert(fields.end(), kohyaBlockFields().begin(), kohyaBlockFields().end());
    for (const char* f : {"rank_dropout", "module_dropout", "unit"}) fields.push_back(f);
    addTruthy(plan, ctx, fields);
  } else {
    // "Standard", "Kohya LoCon" and "LoRA-FA".
    plan.module = type == "LoRA-FA" ? "networks.lora_fa" : sd3 ? "networks.lora_sd3" : "networks.lora";
    if (type == "Kohya LoCon") {
      plan.read.insert("conv_dim");
      plan.read.insert("conv_alpha");
      addArg(plan, "conv_dim", "conv_dim", pythonText(fieldValue(ctx, "conv_dim")));
      addArg(plan, "conv_alpha", "conv_alpha", pythonText(fieldValue(ctx, "conv_alpha")));
    }
    std::vector<std::string> fields = kohyaBlockFields();
    fields.push_back("rank_dropout");
    fields.push_back("module_dropout");
    addTruthy(plan, ctx, fields);
  }
  // append_loraplus_network_args: every type.
  addTruthy(plan, ctx, {"loraplus_lr_ratio", "loraplus_unet_lr_ratio", "loraplus_text_encoder_lr_ratio"});
  return plan;
}

// Every network field kohya_ss's LoRA tab has, for the ones the chosen type does not read.
const std::vector<std::string>& allNetworkFields() {
  static const std::vector<std::string> f{
      "LyCORIS_preset", "conv_dim", "conv_alpha", "factor", "bypass_mode", "dora_wd", "use_cp", "use_tucker",
      "use_scalar", "rank_dropout_scale", "constrain", "rescaled", "train_norm", "decompose_both", "train_on_input",
      "rank_dropout", "module_dropout", "unit", "train_lora_ggpo", "ggpo_sigma", "ggpo_beta", "down_lr_weight",
      "mid_lr_weight", "up_lr_weight", "block_lr_zero_threshold", "block_dims", "block_alphas", "conv_block_dims",
      "conv_block_alphas", "img_attn_dim", "img_mlp_dim", "img_mod_dim", "single_dim", "txt_attn_dim", "txt_mlp_dim",
      "txt_mod_dim", "single_mod_dim", "in_dims", "train_double_block_indices", "train_single_block_indices",
      "split_mode", "train_blocks", "split_qkv", "train_t5xxl", "enable_all_linear", "loraplus_lr_ratio",
      "loraplus_unet_lr_ratio", "loraplus_text_encoder_lr_ratio"};
  return f;
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const std::string& t : tokens) out += (out.empty() ? "" : " ") + t;
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Keys the runner takes only at their default: it refuses these values (runner/network/lora_network.cpp,
// parseNetworkArgs: split q/k/v adapters are not trained; lycoris_args.cpp: LyCORIS's
// DyLoRA, GLoRA, Diag-OFT and BOFT and its norm modules are not trained).
const std::vector<std::string>& runnerRefusedValues() {
  static const std::vector<std::string> tokens{"split_qkv=True", "algo=dylora", "algo=glora",
                                               "algo=diag-oft", "algo=boft", "train_norm=True", "preset=ia3"};
  return tokens;
}

}  // namespace

const std::vector<std::string>& sinterRunnerNetworkArgs() {
  static const std::vector<std::string> keys{
      "loraplus_lr_ratio", "loraplus_unet_lr_ratio", "loraplus_text_encoder_lr_ratio", "conv_dim", "conv_alpha",
      "rank_dropout", "module_dropout", "block_dims", "block_alphas", "conv_block_dims", "conv_block_alphas",
      "down_lr_weight", "mid_lr_weight", "up_lr_weight", "block_lr_zero_threshold", "train_blocks",
      "train_double_block_indices", "train_single_block_indices", "img_attn_dim", "txt_attn_dim", "img_mlp_dim",
      "txt_mlp_dim", "img_mod_dim", "txt_mod_dim", "single_dim", "single_mod_dim", "split_qkv", "train_t5xxl",
      "verbose", "context_attn_dim", "context_mlp_dim", "context_mod_dim", "x_attn_dim", "x_mlp_dim", "x_mod_dim",
      "train_block_indices", "emb_dims"};
  return keys;
}

const std::vector<std::string>& sinterRunnerLycorisArgs() {
  static const std::vector<std::string> keys{
      "algo", "preset", "conv_dim", "conv_alpha", "dropout", "rank_dropout", "module_dropout", "use_tucker", "use_cp",
      "use_conv_cp", "disable_conv_cp", "use_scalar", "decompose_both", "factor", "dora_wd", "bypass_mode", "train_norm",
      "rank_dropout_scale", "train_on_input", "loraplus_lr_ratio", "loraplus_unet_lr_ratio",
      "loraplus_text_encoder_lr_ratio"};
  return keys;
}

const std::vector<std::string>& sinterRunnerNetworkModules() {
  static const std::vector<std::string> modules{"networks.lora", "networks.lora_flux", "networks.lora_sd3", "lycoris.kohya"};
  return modules;
}

void importKohyaNetwork(KohyaImportContext& ctx) {
  if (ctx.tab != Tab::LoRA) return;
  const std::string type = ctx.text("LoRA_type").empty() ? "Standard" : ctx.text("LoRA_type");
  const bool sd3 = ctx.flag("sd3_checkbox");
  const bool flux = ctx.flag("flux1_checkbox");
  const NetworkPlan plan = planFor(type, ctx, sd3, flux);

  std::vector<std::string> allTokens;
  for (const FieldArgs& a : plan.args) allTokens.insert(allTokens.end(), a.tokens.begin(), a.tokens.end());
  const std::string typeShown = "LoRA_type \"" + type + "\"";
  const OptionSpec* moduleSpec = findOption("network_module");
  const bool registryHolds = moduleSpec && contains(moduleSpec->choices, plan.module);

  if (!registryHolds) {
    // The whole network is lost: say what kohya_ss would have trained, with all its arguments.
    std::vector<std::string> keys{"LoRA_type"};
    keys.insert(keys.end(), plan.read.begin(), plan.read.end());
    std::string what = typeShown + ": kohya_ss trains network_module \"" + plan.module + "\"";
    if (!allTokens.empty()) what += " with network_args \"" + joined(allTokens) + "\"";
    ctx.notCarried(keys, what + "; Sinter does not train " + plan.module +
                             ": the imported config trains a standard LoRA instead");
  } else {
    ctx.config().set("network_module", plan.module, SourceLocation{ctx.fileName(), 0, 0});
    // The type's own constant (algo=...) may name what the runner refuses (LyCORIS/GLoRA's algo=glora).
    std::string refusedConstant;
    for (const FieldArgs& a : plan.args)
      for (const std::string& t : a.tokens)
        if (a.field.empty() && contains(runnerRefusedValues(), t)) refusedConstant = t;
    if (!refusedConstant.empty())
      ctx.notCarried({"LoRA_type"}, typeShown + " -> network_module = \"" + plan.module + "\" with " + refusedConstant +
                                        ": Sinter's runner does not train it and refuses the run");
    else if (contains(sinterRunnerNetworkModules(), plan.module))
      ctx.carried({"LoRA_type"}, typeShown + " -> network_module = \"" + plan.module + "\"");
    else
      ctx.notCarried({"LoRA_type"}, typeShown + " -> network_module = \"" + plan.module +
                                        "\": Sinter's runner does not train it and refuses the run");
    if (!allTokens.empty()) ctx.config().set("network_args", allTokens, SourceLocation{ctx.fileName(), 0, 0});
    // Per field, in kohya_ss's order; a field may give several tokens.
    std::vector<std::string> seen;
    for (const FieldArgs& a : plan.args) {
      const std::string key = a.field.empty() ? "LoRA_type" : a.field;
      if (contains(seen, key)) continue;
      seen.push_back(key);
      std::vector<std::string> tokens;
      for (const FieldArgs& b : plan.args)
        if ((b.field.empty() ? "LoRA_type" : b.field) == key) tokens.insert(tokens.end(), b.tokens.begin(), b.tokens.end());
      std::vector<std::string> refused;
      const std::vector<std::string>& runnerKeys =
          plan.module == "lycoris.kohya" ? sinterRunnerLycorisArgs() : sinterRunnerNetworkArgs();
      for (const std::string& t : tokens)
        if (!contains(runnerKeys, t.substr(0, t.find('='))) || contains(runnerRefusedValues(), t))
          refused.push_back(t);
      const std::string head = key + " " + shown(ctx.value(key)) + " -> network_args " + joined(tokens);
      if (refused.empty()) {
        ctx.carried({key}, a.note.empty() ? head : head + " (" + a.note + ")");
      } else {
        ctx.notCarried({key}, head + ": sd-scripts' " + plan.module + " trains with it; Sinter's runner does not, and "
                                     "refuses the run until it is removed from network_args");
      }
    }
    for (const std::string& f : plan.read)
      if (ctx.has(f) && !ctx.accounted(f)) ctx.atDefaults({f}, f + " " + shown(ctx.value(f)) + ": not passed on (kohya_ss's unset or default)");
  }
  for (const std::string& f : allNetworkFields())
    if (ctx.has(f) && !plan.read.count(f) && !ctx.accounted(f))
      ctx.atDefaults({f}, f + " " + shown(ctx.value(f)) + ": not used by " + typeShown);
}

}  // namespace sinter
