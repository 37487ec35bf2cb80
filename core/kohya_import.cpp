#include "core/kohya_import.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/argv.h"
#include "core/atomic_file.h"
#include "core/family_table.h"
#include "core/foreign_options.h"
#include "core/kohya_accelerate.h"
#include "core/kohya_defaults.h"
#include "core/kohya_import_context.h"
#include "core/kohya_network.h"
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
      {"sdxl_cache_text_encoder_outputs", "cache_text_encoder_outputs"},
      {"image_folder", "train_data_dir"},
      {"lora_network_weights", "network_weights"},
      {"flux1_cache_text_encoder_outputs", "cache_text_encoder_outputs"},
      {"flux1_cache_text_encoder_outputs_to_disk", "cache_text_encoder_outputs_to_disk"},
      // The SD3 panel's (class_sd3.py), passed on only with sd3_checkbox (kohyaOnlyFor's sd3_ prefix).
      {"sd3_cache_text_encoder_outputs", "cache_text_encoder_outputs"},
      {"sd3_cache_text_encoder_outputs_to_disk", "cache_text_encoder_outputs_to_disk"},
      {"sd3_disable_mmap_load_safetensors", "disable_mmap_load_safetensors"},
      {"sd3_text_encoder_batch_size", "text_encoder_batch_size"},
  };
  return m;
}

// Fields of kohya_ss's family panels whose name depends on the tab: its LoRA tab saves the Flux1
// panel's text encoders as clip_l/t5xxl and the SD3 panel's as sd3_clip_l/sd3_t5xxl, its DreamBooth
// and fine-tune tabs the SD3 panel's as clip_l/t5xxl and the Flux1 panel's as flux1_clip_l/flux1_t5xxl
// (lora_gui.py, dreambooth_gui.py, finetune_gui.py). Each is passed on for the families `families`
// names (kohya_ss's family names, as ctx.familyName holds them), or for all others with `except`.
struct PanelField {
  const char* key;
  std::uint8_t tabs;  // Tab bits
  const char* families;
  const char* target;
  bool except = false;
};

const PanelField* panelField(const std::string& key, Tab tab) {
  constexpr std::uint8_t lora = static_cast<std::uint8_t>(Tab::LoRA);
  constexpr std::uint8_t full = static_cast<std::uint8_t>(Tab::DreamBooth) | static_cast<std::uint8_t>(Tab::FineTune);
  static const PanelField fields[] = {
      {"clip_l", lora, "FLUX.1", "clip_l"},
      {"t5xxl", lora, "FLUX.1", "t5xxl"},
      {"sd3_clip_l", lora, "SD 3.x", "clip_l"},
      {"sd3_t5xxl", lora, "SD 3.x", "t5xxl"},
      {"clip_l", full, "SD 3.x", "clip_l"},
      {"t5xxl", full, "SD 3.x", "t5xxl"},
      {"flux1_clip_l", full, "FLUX.1", "clip_l"},
      {"flux1_t5xxl", full, "FLUX.1", "t5xxl"},
      // lora_gui.py passes these for SD3 under sd-scripts' names; the full-weight tabs save none of them.
      {"sd3_clip_l_dropout_rate", lora, "SD 3.x", "clip_l_dropout_rate"},
      {"sd3_t5_dropout_rate", lora, "SD 3.x", "t5_dropout_rate"},
      {"sd3_enable_scaled_pos_embed", lora, "SD 3.x", "enable_scaled_pos_embed"},
      // Each panel's fused backward pass; the full-weight tabs' own field only for the other families.
      {"sd3_fused_backward_pass", lora | full, "SD 3.x", "fused_backward_pass"},
      {"flux_fused_backward_pass", full, "FLUX.1", "fused_backward_pass"},
      {"fused_backward_pass", full, "SD 3.x and FLUX.1", "fused_backward_pass", true},
  };
  for (const PanelField& f : fields)
    if (key == f.key && (f.tabs & static_cast<std::uint8_t>(tab))) return &f;
  return nullptr;
}

// Options kohya_ss passes for a family (kohya_ss's name for it) whose sd-scripts script reads them,
// where Sinter has them for other families only: what they do is lost, and this says what.
const char* lostForFamily(const std::string& key, const std::string& family) {
  if (key == "blocks_to_swap") return "sd-scripts keeps that many blocks in CPU memory; this run needs more GPU memory";
  if (key == "fp8_base" || key == "fp8_base_unet")
    return "sd-scripts stores the frozen base model in fp8; this run keeps it in the training precision, with more GPU memory";
  return nullptr;
}

std::string familyLabel(Family f) { return familyRow(f).label; }

// class_source_model.py / common_gui.py: the model menu's entries and the family each sets.
std::optional<Family> familyOfListedModel(const std::string& model) {
  for (const FamilyRow& row : familyTable())
    for (const char* listed : row.kohyaListedModels)
      if (model == listed) return row.family;
  return std::nullopt;
}

// The model family, from the checkboxes each kohya_ss tab saves (LoRA and DreamBooth: sdxl;
// fine-tune: sdxl_checkbox; all: v2, flux1_checkbox, sd3_checkbox, ...), in the order the tabs pick
// their sd-scripts script; then from the model menu's entry.
void readFamily(KohyaImportContext& ctx) {
  struct Marker {
    const char* key;
    std::optional<Family> family;  // nullopt: a family Sinter does not train
    const char* name;
    int order;  // the place of its checkbox in kohya_ss's choice of a script
  };
  // The families Sinter trains (the family table's checkboxes), and those it does not at their places.
  static const std::vector<Marker> markers = [] {
    std::vector<Marker> all{{"hunyuan_image_checkbox", std::nullopt, "HunyuanImage-2.1", 4},
                            {"anima_checkbox", std::nullopt, "Anima", 5},
                            {"lumina_checkbox", std::nullopt, "Lumina", 6}};
    for (const FamilyRow& row : familyTable())
      for (const auto& [key, order] : row.kohyaCheckboxes) all.push_back({key, row.family, row.label, order});
    std::stable_sort(all.begin(), all.end(), [](const Marker& a, const Marker& b) { return a.order < b.order; });
    return all;
  }();
  const Marker* chosen = nullptr;
  for (const Marker& m : markers)
    if (!chosen && ctx.flag(m.key)) chosen = &m;
  const std::string listed = ctx.text("model_list");
  if (chosen) {
    ctx.family = chosen->family;
    ctx.familyName = chosen->name;
    if (chosen->family) {
      ctx.config().set("model_family", std::string(toString(*chosen->family)));
      std::string implied;
      for (const auto& [key, value] : familyRow(*chosen->family).kohyaImplied) {
        ctx.config().set(key, value);
        implied += std::string(", ") + key + " = " + (value ? "true" : "false");
      }
      ctx.carried({chosen->key}, std::string(chosen->key) + " true -> model_family = \"" + toString(*chosen->family) + "\"" + implied);
    } else {
      ctx.notCarried({chosen->key}, std::string(chosen->key) + " true: kohya_ss trains " + chosen->name +
                                        "; Sinter does not train " + chosen->name + ", so model_family stays auto");
    }
  } else if (std::optional<Family> f = familyOfListedModel(listed)) {
    ctx.family = f;
    ctx.familyName = familyLabel(*f);
    ctx.config().set("model_family", std::string(toString(*f)));
    ctx.carried({"model_list"}, "model_list \"" + listed + "\" -> model_family = \"" + toString(*f) + "\"");
  } else {
    for (const Marker& m : markers)
      if (ctx.has(m.key) && m.family) {
        // A file with the family checkboxes, none ticked: kohya_ss runs its SD 1.x scripts.
        const Family unticked = kohyaUntickedFamily();
        ctx.family = unticked;
        ctx.familyName = familyLabel(unticked);
        ctx.config().set("model_family", std::string(toString(unticked)));
        ctx.carried({m.key}, std::string(m.key) + " false (no family ticked) -> model_family = \"" + toString(unticked) + "\"");
        break;
      }
  }
  for (const Marker& m : markers)
    if (ctx.has(m.key) && !ctx.accounted(m.key))
      ctx.atDefaults({m.key}, std::string(m.key) + " " + shown(ctx.value(m.key)) + ": not ticked");
  if (ctx.has("model_list") && !ctx.accounted("model_list"))
    ctx.atDefaults({"model_list"}, "model_list " + shown(ctx.value("model_list")) +
                                       ": the GUI's model menu; pretrained_model_name_or_path names the model");
}

// kohya_ss has one tab per training type; each saves keys the others do not (its Textual Inversion
// tab: token_string, textual_inversion_gui.py).
void readTab(KohyaImportContext& ctx) {
  if (ctx.has("token_string")) ctx.tab = Tab::TextualInversion;
  else if (ctx.has("LoRA_type")) ctx.tab = Tab::LoRA;
  else if (ctx.has("sdxl_checkbox") || ctx.has("train_dir") || ctx.has("image_folder") || ctx.has("in_json") ||
           ctx.has("use_latent_files"))
    ctx.tab = Tab::FineTune;
  else
    ctx.tab = Tab::DreamBooth;
  ctx.config().set("training_type", std::string(toString(ctx.tab)));
}

// The Textual Inversion tab's template menu: "caption" trains on the captions, the others pass
// sd-scripts' use_object_template / use_style_template (textual_inversion_gui.py).
void importTextualInversionTemplate(KohyaImportContext& ctx) {
  if (ctx.tab != Tab::TextualInversion || !ctx.has("template")) return;
  const std::string chosen = ctx.text("template");
  const char* option = chosen == "object template" ? "use_object_template" : chosen == "style template" ? "use_style_template" : nullptr;
  if (chosen == "caption")
    ctx.atDefaults({"template"}, "template \"caption\": the captions are used, as in Sinter");
  else if (!option)
    ctx.notCarried({"template"}, "template " + shown(ctx.value("template")) +
                                     ": kohya_ss offers \"caption\", \"object template\" and \"style template\"; the captions are used");
  else if (std::string err = ctx.setOption(option, true); err.empty())
    ctx.carried({"template"}, "template \"" + chosen + "\" -> " + option + " = true");
  else
    ctx.notCarried({"template"}, "template \"" + chosen + "\": " + err);
}

// kohya_ss spells the attention choice as one field: "xformers", "sdpa" or "none" (old files: true).
void importAttention(KohyaImportContext& ctx) {
  if (!ctx.has("xformers")) return;
  const json& x = ctx.value("xformers");
  const std::string choice = x.is_boolean() ? (x.get<bool>() ? "xformers" : "none") : ctx.text("xformers");
  if (choice == "xformers" || choice == "sdpa") {
    ctx.config().set(choice, true);
    ctx.carried({"xformers"}, "xformers " + shown(x) + " -> " + choice + " = true");
  } else {
    ctx.atDefaults({"xformers"}, "xformers " + shown(x) + ": plain attention");
  }
}

// LoRA's learning rates: 0 means "learning_rate applies", and kohya_ss trains only the U-Net (or
// only the text encoders) when the other's rate is 0 (lora_gui.py's resolve_network_train_flags).
void importLoraLearningRates(KohyaImportContext& ctx) {
  if (ctx.tab != Tab::LoRA) return;
  const double te = ctx.numberOr("text_encoder_lr", 0), unet = ctx.numberOr("unet_lr", 0);
  const double t5 = ctx.numberOr("t5xxl_lr", 0);
  if (te == 0 && unet != 0) {
    ctx.config().set("network_train_unet_only", true);
    ctx.carried({"text_encoder_lr"}, "text_encoder_lr " + shown(ctx.value("text_encoder_lr")) +
                                         " -> network_train_unet_only = true (kohya_ss trains no text encoder LoRA when its rate is 0)");
  } else if (te != 0 && unet == 0) {
    ctx.config().set("network_train_text_encoder_only", true);
    ctx.carried({"unet_lr"}, "unet_lr " + shown(ctx.value("unet_lr")) +
                                 " -> network_train_text_encoder_only = true (kohya_ss trains no U-Net LoRA when its rate is 0)");
  } else if (te == 0 && unet == 0) {
    ctx.atDefaults({"text_encoder_lr", "unet_lr"}, "text_encoder_lr and unet_lr 0: learning_rate applies to both");
  }
  // kohya_ss passes [text_encoder_lr, t5xxl_lr] as text_encoder_lr, which networks.lora_flux reads
  // as CLIP-L's and T5-XXL's rates and networks.lora_sd3 as CLIP-L's and CLIP-G's and T5-XXL's
  // (Sinter's t5xxl_lr); other families' networks read the first.
  const bool flux = ctx.family && findOption("t5xxl_lr")->appliesToFamily(*ctx.family);
  if (flux && t5 != 0 && te != 0 && t5 != te) {
    ctx.config().set("t5xxl_lr", t5);
    ctx.carried({"t5xxl_lr"}, "t5xxl_lr " + shown(ctx.value("t5xxl_lr")) + " -> t5xxl_lr (text_encoder_lr's second value in sd-scripts)");
  } else if (flux && t5 != 0 && te == 0) {
    ctx.notCarried({"t5xxl_lr"}, "t5xxl_lr " + shown(ctx.value("t5xxl_lr")) +
                                     ": kohya_ss refuses a T5-XXL rate without a text encoder rate; T5-XXL trains at learning_rate");
  } else if (ctx.has("t5xxl_lr")) {
    ctx.atDefaults({"t5xxl_lr"}, "t5xxl_lr " + shown(ctx.value("t5xxl_lr")) + ": unset, or the text encoder's rate");
  }
}

// DreamBooth / fine-tune: kohya_ss passes learning_rate_te for SD 1.x/2.x and learning_rate_te1/te2
// for SDXL (Sinter's options of those names); the LoRA tab uses text_encoder_lr instead.
void importTextEncoderRate(KohyaImportContext& ctx) {
  // dreambooth_gui.py: "learning_rate_te1": learning_rate_te1 if sdxl else None (te2 alike).
  for (const char* key : {"learning_rate_te1", "learning_rate_te2"})
    if (ctx.tab != Tab::LoRA && ctx.has(key) && !ctx.familyName.empty() && ctx.familyName != "SDXL")
      ctx.atDefaults({key}, std::string(key) + " " + shown(ctx.value(key)) + ": kohya_ss passes it for SDXL only; learning_rate applies");
  if (!ctx.has("learning_rate_te")) return;
  const bool used = ctx.tab != Tab::LoRA && (!ctx.family || familyRow(*ctx.family).kohyaLearningRateTe);
  if (used && !isKohyaUnset(ctx.value("learning_rate_te")))
    ctx.notCarried({"learning_rate_te"}, "learning_rate_te " + shown(ctx.value("learning_rate_te")) +
                                             ": Sinter has no separate text encoder rate for SD 1.x/2.x; learning_rate applies");
  else
    ctx.atDefaults({"learning_rate_te"}, "learning_rate_te " + shown(ctx.value("learning_rate_te")) +
                                             ": not passed on for this tab and family");
}

// epoch sets the length only through the max_train_steps kohya_ss computes when that is 0, and
// max_train_epochs overrides both.
void importLength(KohyaImportContext& ctx) {
  const double steps = ctx.numberOr("max_train_steps", 0), epochs = ctx.numberOr("max_train_epochs", 0);
  if (!ctx.has("epoch")) return;
  const std::string epoch = shown(ctx.value("epoch"));
  if (isKohyaUnset(ctx.value("epoch")))
    ctx.atDefaults({"epoch"}, "epoch " + epoch + ": unset");
  else if (epochs > 0)
    ctx.atDefaults({"epoch"}, "epoch " + epoch + ": max_train_epochs overrides it");
  else if (steps > 0)
    ctx.atDefaults({"epoch"}, "epoch " + epoch + ": kohya_ss uses it only to compute max_train_steps when that is 0");
  else if (!ctx.text("dataset_config").empty())
    ctx.atDefaults({"epoch"}, "epoch " + epoch + ": with a dataset_config kohya_ss passes neither (sd-scripts' 1600 steps)");
  else if (std::string err = ctx.setOption("max_train_epochs", ctx.value("epoch")); err.empty())
    ctx.carried({"epoch"}, "epoch " + epoch + " -> max_train_epochs = " + epoch +
                               " (kohya_ss computes max_train_steps from it)");
  else
    ctx.notCarried({"epoch"}, "epoch " + epoch + ": " + err);
}

// lr_warmup is a percentage of the steps in the GUI, lr_warmup_steps an override in steps
// (common_gui.py's resolve_lr_warmup_steps); sd-scripts takes a ratio below 1.
void importWarmup(KohyaImportContext& ctx) {
  const double pct = ctx.numberOr("lr_warmup", 0), steps = ctx.numberOr("lr_warmup_steps", 0);
  if (steps > 0) {
    ctx.config().set("lr_warmup_steps", static_cast<long long>(steps));
    ctx.carried({"lr_warmup_steps"}, "lr_warmup_steps = " + std::to_string(static_cast<long long>(steps)));
    if (ctx.has("lr_warmup")) ctx.atDefaults({"lr_warmup"}, "lr_warmup " + shown(ctx.value("lr_warmup")) + ": lr_warmup_steps overrides it");
  } else if (pct > 0 && pct < 100) {
    ctx.config().set("lr_warmup_steps", pct / 100.0);
    ctx.carried({"lr_warmup"}, "lr_warmup " + formatDouble(pct) + "% -> lr_warmup_steps = " + formatDouble(pct / 100.0));
  } else if (pct != 0) {
    ctx.notCarried({"lr_warmup"}, "lr_warmup " + formatDouble(pct) + "% is not between 0 and 100%");
  }
  for (const char* k : {"lr_warmup", "lr_warmup_steps"})
    if (!ctx.accounted(k)) ctx.atDefaults({k}, std::string(k) + " " + shown(ctx.value(k)) + ": unset");
}

// noise_offset_type picks which noise fields kohya_ss passes on: Original's noise_offset,
// adaptive_noise_scale and noise_offset_random_strength, or Multires' multires_noise_*.
void importNoiseType(KohyaImportContext& ctx) {
  if (!ctx.has("noise_offset_type")) return;
  const std::string type = ctx.text("noise_offset_type");
  const bool multires = type == "Multires";
  ctx.atDefaults({"noise_offset_type"}, "noise_offset_type \"" + type + "\": selects which noise fields kohya_ss passes on");
  const std::vector<std::string> unused = multires
      ? std::vector<std::string>{"noise_offset", "adaptive_noise_scale", "noise_offset_random_strength"}
      : std::vector<std::string>{"multires_noise_iterations", "multires_noise_discount"};
  for (const std::string& k : unused)
    if (ctx.has(k)) ctx.atDefaults({k}, k + " " + shown(ctx.value(k)) + ": not passed on with noise_offset_type \"" + type + "\"");
}

// Fine-tune reads captions from the metadata file kohya_ss's preparation wrote into train_dir, and
// repeats each image dataset_repeats times per epoch.
void importFineTuneMetadata(KohyaImportContext& ctx) {
  if (ctx.tab != Tab::FineTune) return;
  if (ctx.has("dataset_repeats")) {
    const std::optional<double> repeats = ctx.number("dataset_repeats");
    if (repeats && *repeats == 1)
      ctx.atDefaults({"dataset_repeats"}, "dataset_repeats " + shown(ctx.value("dataset_repeats")) + ": each image once per epoch, as in Sinter");
    else
      ctx.notCarried({"dataset_repeats"}, "dataset_repeats " + shown(ctx.value("dataset_repeats")) +
                                              ": kohya_ss counts each image that many times per epoch; Sinter's fine-tune "
                                              "has no repeats, so its epochs are shorter (steps are unchanged)");
  }
  if (ctx.has("in_json")) return;
  if (ctx.text("train_dir").empty()) {
    ctx.atDefaults({"train_dir", "use_latent_files"}, "train_dir \"\": no metadata folder, so no metadata file (use_latent_files unused)");
    return;
  }
  const bool latents = !ctx.has("use_latent_files") || ctx.text("use_latent_files") == "Yes";
  const std::string nameKey = latents ? "latent_metadata_filename" : "caption_metadata_filename";
  std::string name = ctx.text(nameKey);
  if (name.empty()) name = pythonText(*kohyaGuiDefault(nameKey));
  const std::string path = ctx.text("train_dir") + "/" + name;
  if (std::string err = ctx.setOption("in_json", path); err.empty())
    ctx.carried({"train_dir", "use_latent_files", nameKey}, "train_dir + " + nameKey + " -> in_json = \"" + path + "\"");
  else
    ctx.notCarried({"train_dir"}, "train_dir: " + err);
}

// Things kohya_ss's GUI does itself, before sd-scripts.
void importGuiOnly(KohyaImportContext& ctx) {
  if (!ctx.text("sample_prompts").empty())
    ctx.notCarried({"sample_prompts"}, "sample_prompts: kohya_ss writes this text into <output_dir>/sample/prompt.txt; "
                                       "save it to a file and choose that file as Sample prompts");
  // W&B: the runner refuses log_with = "wandb" (no W&B client here); what it logs goes to
  // TensorBoard when a logging folder is set. Training is the same either way.
  if (ctx.has("log_with")) {
    const std::string with = ctx.text("log_with");
    const bool folder = !ctx.text("logging_dir").empty();
    if (with == "wandb" || with == "all") {
      if (folder && ctx.setOption("log_with", std::string("tensorboard")).empty())
        ctx.carried({"log_with"}, "log_with \"" + with + "\" -> log_with = \"tensorboard\": Sinter has no W&B client; the losses "
                                  "and learning rates go to TensorBoard in logging_dir (training is unchanged)");
      else
        ctx.notCarried({"log_with"}, "log_with \"" + with + "\": Sinter has no W&B client, so nothing is logged to W&B (training is "
                                     "unchanged; set logging_dir for a TensorBoard log)");
    }
  }
  // kohya_ss passes --no_half_vae when the family's own checkbox (SDXL's sdxl_no_half_vae) is ticked.
  const char* noHalfVae = ctx.family ? familyRow(*ctx.family).kohyaNoHalfVaeKey : nullptr;
  if (noHalfVae && ctx.has(noHalfVae)) {
    const std::string key = noHalfVae;
    if (!ctx.flag(key))
      ctx.atDefaults({key}, key + " false: no_half_vae's default");
    else if (std::string err = ctx.setOption("no_half_vae", true); err.empty())
      ctx.carried({key}, key + " true -> no_half_vae = true");
    else
      ctx.notCarried({key}, key + ": " + err);
  }
}

// Shell-style words: kohya_ss hands additional_parameters to its command line, which drops quotes.
std::vector<std::string> shellWords(const std::string& s) {
  std::vector<std::string> words;
  std::string cur;
  bool inWord = false;
  char quote = 0;
  for (char ch : s) {
    if (quote) {
      if (ch == quote) quote = 0;
      else cur += ch;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
      inWord = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (inWord) words.push_back(cur);
      cur.clear();
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (inWord) words.push_back(cur);
  return words;
}

// Extra command-line parameters typed into the GUI; each option is parsed on its own so one unknown
// flag does not lose the rest.
void importAdditionalParameters(KohyaImportContext& ctx) {
  const std::vector<std::string> args = shellWords(ctx.text("additional_parameters"));
  if (args.empty()) {
    ctx.atDefaults({"additional_parameters"}, "additional_parameters \"\": none");
    return;
  }
  for (std::size_t i = 0; i < args.size();) {
    std::size_t j = i + 1;
    while (j < args.size() && args[j].rfind("--", 0) != 0) ++j;
    std::vector<std::string> one(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(j));
    std::string words;
    for (const std::string& w : one) words += (words.empty() ? "" : " ") + w;
    try {
      ctx.config().overlay(parseArgv(one).overrides);
      ctx.carried({"additional_parameters"}, "additional_parameters: " + words, true);
    } catch (const ConfigError& e) {
      ctx.notCarried({"additional_parameters"}, "additional_parameters: " + words + ": " + e.what(), true);
    }
    i = j;
  }
}

bool sameValue(const Value& a, const Value& b) {
  auto numeric = [](const Value& v) { return std::holds_alternative<long long>(v) || std::holds_alternative<double>(v); };
  if (numeric(a) && numeric(b)) return asDouble(a) == asDouble(b);
  return a == b;
}

// Every key no part above took: a registry option of the same name (or renamed), or a kohya_ss
// field Sinter has no option for.
void importRemaining(KohyaImportContext& ctx) {
  for (auto it = ctx.root().begin(); it != ctx.root().end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (ctx.accounted(key)) continue;
    const std::string value = shown(v);
    const std::string family = ctx.familyName.empty() ? "?" : ctx.familyName;
    std::string target = key;
    if (const PanelField* panel = panelField(key, ctx.tab)) {
      const bool listed = std::string(panel->families).find(family) != std::string::npos;
      if (listed == panel->except) {
        ctx.atDefaults({key}, key + " " + value + ": kohya_ss's " + toString(ctx.tab) + " tab passes it on " +
                                  (panel->except ? "for other families than " : "only for ") + panel->families);
        continue;
      }
      target = panel->target;
    } else if (const std::string onlyFor = kohyaOnlyFor(key); !onlyFor.empty() && onlyFor.find(family) == std::string::npos) {
      ctx.atDefaults({key}, key + " " + value + ": kohya_ss passes it on only for " + onlyFor);
      continue;
    }
    if (auto rn = renames().find(key); rn != renames().end()) target = rn->second;
    const OptionSpec* spec = key == "model_family" || key == "training_type" ? nullptr : findOption(target);
    const std::string named = target == key ? key : key + " -> " + target;
    if (!spec) {
      const json* guiDefault = kohyaGuiDefault(key);
      const std::string noEffect = kohyaNoEffectOnTraining(key);
      if (isKohyaUnset(v)) ctx.atDefaults({key}, key + " " + value + ": unset");
      else if (guiDefault && *guiDefault == v) ctx.atDefaults({key}, key + " " + value + ": kohya_ss's default");
      else if (guiDefault && ctx.number(key) && guiDefault->is_number() && *ctx.number(key) == guiDefault->get<double>())
        ctx.atDefaults({key}, key + " " + value + ": kohya_ss's default");
      else if (!noEffect.empty()) ctx.atDefaults({key}, key + " " + value + ": " + noEffect + "; no effect on what is trained");
      else if (const ForeignOption* f = findForeignOption(target); f && f->handling == ForeignHandling::Ignored)
        ctx.atDefaults({key}, key + " " + value + ": " + f->reason + "; no effect on what is trained");
      else ctx.notCarried({key}, key + " " + value + ": Sinter has no such setting");
      continue;
    }
    if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) {
      ctx.atDefaults({key}, key + " " + value + ": unset");
      continue;
    }
    if (const char* lost = lostForFamily(target, ctx.familyName); lost && ctx.family && !spec->appliesToFamily(*ctx.family) && !isKohyaUnset(v)) {
      ctx.notCarried({key}, named + " " + value + ": Sinter has it for " + familyLabels(spec->families) + " only, not " +
                                familyLabel(*ctx.family) + ": " + lost);
      continue;
    }
    if ((ctx.family && !spec->appliesToFamily(*ctx.family)) || !spec->appliesToTab(ctx.tab)) {
      ctx.atDefaults({key}, key + " " + value + ": not used in " +
                                (ctx.family && !spec->appliesToFamily(*ctx.family) ? familyLabel(*ctx.family) : toString(ctx.tab)) +
                                " training");
      continue;
    }
    Config before = ctx.config();
    if (std::string err = ctx.setOption(target, v); !err.empty()) {
      // 0 where Sinter needs at least 1 (vae_batch_size, save_every_n_steps): kohya_ss's "not set".
      if (isKohyaUnset(v)) ctx.atDefaults({key}, key + " " + value + ": unset");
      else ctx.notCarried({key}, named + ": " + err);
      continue;
    }
    // kohya_ss's 0 / false for an option whose default means the same: nothing to carry.
    if (isKohyaUnset(v) && (isUnset(spec->defaultValue) || sameValue(ctx.config().get(target), spec->defaultValue))) {
      ctx.config() = before;
      ctx.atDefaults({key}, key + " " + value + ": unset, as in Sinter");
      continue;
    }
    ctx.carried({key}, named + " = " + value);
  }
}

}  // namespace

// A preset saved with only some fields (kohya_ss's own presets often omit max_resolution): the
// GUI that loads it keeps its other fields at their defaults, and max_resolution's is "512,512"
// (class_basic_training.py). sd-scripts has no default and the runner requires one.
void importAbsentResolution(KohyaImportContext& ctx) {
  if (ctx.has("max_resolution") || ctx.config().has("resolution")) return;
  ctx.config().set("resolution", std::string("512,512"));
  ctx.carried({}, "max_resolution absent: kohya_ss's GUI default \"512,512\" -> resolution = \"512,512\"");
}

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

  KohyaImportResult result;
  KohyaImportContext ctx(std::move(root), fileName, result);
  readTab(ctx);
  readFamily(ctx);
  importKohyaNetwork(ctx);
  importKohyaAccelerate(ctx);
  importAttention(ctx);
  importLoraLearningRates(ctx);
  importTextEncoderRate(ctx);
  importTextualInversionTemplate(ctx);
  importLength(ctx);
  importWarmup(ctx);
  importNoiseType(ctx);
  importFineTuneMetadata(ctx);
  importGuiOnly(ctx);
  importAdditionalParameters(ctx);
  importRemaining(ctx);
  importAbsentResolution(ctx);
  return result;
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
