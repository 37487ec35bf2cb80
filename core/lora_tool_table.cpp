#include "core/lora_tool_table.h"

namespace sinter {

namespace {

using K = ToolFlagKind;

const std::vector<const char*> kPrecisions = {"float", "fp16", "bf16"};
const std::vector<const char*> kDevices = {"cpu", "cuda"};
const std::vector<const char*> kFluxLayouts = {"ai-toolkit", "sd-scripts", "diffusers", "onetrainer"};

std::vector<LoraToolSpec> makeTable() {
  std::vector<LoraToolSpec> t;
  t.push_back({"resize_lora",
               "Resize a LoRA to a smaller rank",
               "resize_lora --model IN --save_to OUT [--new_rank N] ...   a LoRA at a smaller rank (resize_lora.py)",
               "A LoRA re-factored to a smaller rank, as sd-scripts' networks/resize_lora.py does it (same flags and defaults): "
               "each module's up·down is decomposed by SVD (of its two factors: exact at any size) and its largest singular "
               "directions kept; alpha is scaled so that alpha/rank, the module's scale, is unchanged. A module never gains rank.",
               {{"model", K::InputFile, "", "The LoRA to resize", {}, true},
                {"save_to", K::OutputFile, "", "The resized LoRA's file", {}, true},
                {"new_rank", K::Integer, "4", "Rank of the Linear modules; the most a dynamic method may choose"},
                {"new_conv_rank", K::Integer, "", "Rank of the convolution modules (default: new_rank)"},
                {"dynamic_method", K::Choice, "", "A rank per module from its singular values S, as resize_lora.py computes it: "
                 "sv_ratio from S > S[0]/param, sv_cumulative from Σ S[:k] ≥ param·Σ S, sv_fro from ‖S[:k]‖ ≥ param·‖S‖",
                 {"sv_ratio", "sv_fro", "sv_cumulative"}},
                {"dynamic_param", K::Number, "", "The dynamic method's parameter"},
                {"save_precision", K::Choice, "float", "Precision of the written tensors", kPrecisions},
                {"device", K::Choice, "cpu", "Where the SVDs run", kDevices},
                {"verbose", K::Switch, "", "Each module's retained singular values in the log"},
                {"svd_lowrank_niter", K::Integer, "", "Accepted for sd-scripts' command lines; not needed", {}, false, true}}});
  t.push_back({"merge_lora",
               "Merge LoRAs into a checkpoint, or into one LoRA",
               "merge_lora --models A [B ...] --ratios 1 [0.5 ...] [--sd_model CKPT] --save_to OUT   LoRAs merged into a checkpoint "
               "or into one LoRA (merge_lora.py, sdxl_merge_lora.py, flux_merge_lora.py)",
               "LoRAs merged into a checkpoint, or into one LoRA, as sd-scripts' merge_lora.py, sdxl_merge_lora.py and "
               "flux_merge_lora.py do it (one tool under the three names, their flags and defaults). With a checkpoint (its "
               "family read from its keys) each weight a LoRA module names becomes W + ratio * its delta (LyCORIS modules by "
               "LyCORIS's formulas); every other tensor is kept under its key. Without one, the LoRAs' lora_down and lora_up "
               "are summed (the ranks must match; sd-scripts' merge, not the sum of the products: svd_merge_lora makes that).",
               {{"models", K::InputFiles, "", "The LoRA files, applied in order", {}, true},
                {"ratios", K::Numbers, "", "One ratio per LoRA file", {}, true},
                {"save_to", K::OutputFile, "", "The merged checkpoint's (or LoRA's) file", {}, true},
                {"sd_model", K::InputFile, "", "The checkpoint (SD 1.x, SD 2.x, SDXL, SD 3.x); without one the LoRAs merge into one LoRA"},
                {"flux_model", K::InputFile, "", "A FLUX transformer to merge into (flux_merge_lora.py's name for it)"},
                {"precision", K::Choice, "float", "Precision of the arithmetic", kPrecisions},
                {"save_precision", K::Choice, "", "Precision of the written tensors (default: precision)", kPrecisions},
                {"concat", K::Switch, "", "Into one LoRA: stack the ranks instead of summing"},
                {"shuffle", K::Switch, "", "Into one LoRA: permute each module's rank directions"},
                {"no_metadata", K::Switch, "", "Write no modelspec metadata"},
                {"device", K::Choice, "cpu", "Where the sums run", kDevices},
                {"clip_l", K::InputFile, "", "FLUX's or SD 3.x's CLIP-L file to merge into", {}, false, true},
                {"clip_l_save_to", K::OutputFile, "", "Where the merged CLIP-L goes", {}, false, true},
                {"clip_g", K::InputFile, "", "SD 3.x's CLIP-G file to merge into", {}, false, true},
                {"clip_g_save_to", K::OutputFile, "", "Where the merged CLIP-G goes", {}, false, true},
                {"t5xxl", K::InputFile, "", "FLUX's or SD 3.x's T5-XXL file to merge into", {}, false, true},
                {"t5xxl_save_to", K::OutputFile, "", "Where the merged T5-XXL goes", {}, false, true},
                {"working_device", K::Text, "", "flux_merge_lora.py's name for --device", {}, false, true},
                {"loading_device", K::Text, "", "Accepted for sd-scripts' command lines; not needed", {}, false, true},
                {"mem_eff_load_save", K::Switch, "", "Accepted for sd-scripts' command lines; not needed", {}, false, true},
                {"diffusers", K::Switch, "", "A FLUX transformer in diffusers' layout (not built)", {}, false, true},
                {"v2", K::Switch, "", "Accepted for sd-scripts' command lines; the family is read from the file", {}, false, true},
                {"lbws", K::Texts, "", "Per-block weights, one JSON list per LoRA (12, 17, 20 or 26 numbers)", {}, false, true}},
               {"sdxl_merge_lora", "flux_merge_lora"}});
  t.push_back({"svd_merge_lora",
               "Merge LoRAs into one LoRA of a chosen rank",
               "svd_merge_lora --models A [B ...] --ratios 1 [0.5 ...] --new_rank N --save_to OUT   LoRAs summed and factored back "
               "to one rank (svd_merge_lora.py)",
               "LoRAs merged into one LoRA of a chosen rank, as sd-scripts' networks/svd_merge_lora.py does it (same flags and "
               "defaults): each module's weight deltas (ratio * alpha/rank * up @ down) are summed over the files and factored "
               "back by SVD to their largest directions, up and down clamped to their 0.99 quantile; alpha is the new rank.",
               {{"models", K::InputFiles, "", "The LoRA files", {}, true},
                {"ratios", K::Numbers, "", "One ratio per LoRA file", {}, true},
                {"save_to", K::OutputFile, "", "The merged LoRA's file", {}, true},
                {"new_rank", K::Integer, "4", "Rank of the Linear and 1x1-convolution modules"},
                {"new_conv_rank", K::Integer, "", "Rank of the 3x3-convolution modules (default: new_rank)"},
                {"precision", K::Choice, "float", "Precision of the sums", kPrecisions},
                {"save_precision", K::Choice, "", "Precision of the written tensors (default: precision)", kPrecisions},
                {"device", K::Choice, "cpu", "Where the sums and SVDs run", kDevices},
                {"no_metadata", K::Switch, "", "Write no modelspec metadata"},
                {"lbws", K::Texts, "", "Per-block weights, one JSON list per LoRA (12, 17, 20 or 26 numbers)", {}, false, true}}});
  t.push_back({"extract_lora_from_models",
               "Extract a LoRA from a fine-tuned checkpoint",
               "extract_lora_from_models --model_org A --model_tuned B --save_to OUT [--dim N]   a LoRA of the difference of two "
               "checkpoints (extract_lora_from_models.py, flux_extract_lora.py)",
               "A LoRA that stands for the difference between a tuned checkpoint and its original, as sd-scripts' "
               "extract_lora_from_models.py and flux_extract_lora.py make it (one tool under both names, their flags and "
               "defaults; the family is read from the files' keys). At every module sd-scripts' LoRA network targets, "
               "tuned - original is factored by truncated SVD: up = U*S, down = V^T over the largest --dim directions, both "
               "clamped to the --clamp_quantile quantile of their values; alpha = the rank.",
               {{"model_org", K::InputFile, "", "The original checkpoint", {}, true},
                {"model_tuned", K::InputFile, "", "The tuned checkpoint", {}, true},
                {"save_to", K::OutputFile, "", "The LoRA's file", {}, true},
                {"dim", K::Integer, "4", "Rank of the LoRA"},
                {"conv_dim", K::Integer, "", "Also the U-Net's ResBlocks, their 3x3 convolutions at this rank"},
                {"clamp_quantile", K::Number, "0.99", "Quantile the factors are clamped to"},
                {"min_diff", K::Number, "0.01", "The text encoders are left out when no weight differs by more"},
                {"save_precision", K::Choice, "float", "Precision of the written tensors", kPrecisions},
                {"load_precision", K::Choice, "", "Round both checkpoints to this precision first", kPrecisions},
                {"device", K::Choice, "cpu", "Where the SVDs run", kDevices},
                {"no_metadata", K::Switch, "", "Write no modelspec metadata"},
                {"v2", K::Switch, "", "Accepted for sd-scripts' command lines; the family is read from the files", {}, false, true},
                {"sdxl", K::Switch, "", "Accepted for sd-scripts' command lines; the family is read from the files", {}, false, true},
                {"v_parameterization", K::Switch, "", "Accepted for sd-scripts' command lines", {}, false, true},
                {"load_original_model_to", K::Text, "", "Accepted for sd-scripts' command lines; not needed", {}, false, true},
                {"load_tuned_model_to", K::Text, "", "Accepted for sd-scripts' command lines; not needed", {}, false, true},
                {"mem_eff_safe_open", K::Switch, "", "Accepted for sd-scripts' command lines; not needed", {}, false, true}},
               {"flux_extract_lora"}});
  t.push_back({"convert_flux_lora",
               "Convert a FLUX LoRA between trainers' layouts",
               "convert_flux_lora --src ai-toolkit --dst sd-scripts --src_path IN --dst_path OUT   a FLUX LoRA between trainers' "
               "layouts (convert_flux_lora.py)",
               "A FLUX LoRA from one trainer's layout to another's, as sd-scripts' networks/convert_flux_lora.py converts it "
               "(same flags and defaults), and OneTrainer's layout too. sd-scripts: BFL's module names, q/k/v fused; "
               "ai-toolkit (or diffusers): diffusers' names under transformer., lora_A/lora_B, no alpha; onetrainer: diffusers' "
               "names under lora_transformer_, with alpha. The text encoders' modules are renamed too (CLIP-L lora_te1_ / "
               "text_encoder., T5 lora_te3_ / onetrainer lora_te2_ / text_encoder_2.). resize_lora, merge_lora and "
               "svd_merge_lora read the other layouts without this step.",
               {{"src_path", K::InputFile, "", "The LoRA to convert", {}, true},
                {"dst_path", K::OutputFile, "", "The converted LoRA's file", {}, true},
                {"src", K::Choice, "ai-toolkit", "The layout it is in", kFluxLayouts},
                {"dst", K::Choice, "sd-scripts", "The layout to write", kFluxLayouts}}});
  t.push_back({"check_lora_weights",
               "Check what a LoRA file holds",
               "check_lora_weights FILE [-s]   what a LoRA or LyCORIS file holds, each tensor's magnitudes (check_lora_weights.py)",
               "What a LoRA or LyCORIS file holds (network, algorithms, ranks, alphas, the model it was trained for, the main "
               "ss_ metadata), then sd-scripts' networks/check_lora_weights.py lines: for each lora_down and lora_up tensor "
               "key,shape,mean(|w|),min(|w|) (-s: every tensor).",
               {{"file", K::InputFile, "", "The LoRA or LyCORIS file", {}, true},
                {"show_all_keys", K::Switch, "", "Every tensor, not only lora_down and lora_up"}},
               {},
               "file",
               {{"s", "show_all_keys"}}});
  return t;
}

}  // namespace

const std::vector<LoraToolSpec>& loraToolTable() {
  static const std::vector<LoraToolSpec> table = makeTable();
  return table;
}

std::string loraToolHelp(const LoraToolSpec& tool) {
  std::string out = std::string("usage: sinter-runner ") + tool.usage + "\n";
  for (const char* alias : tool.aliases) out += std::string("       (also: sinter-runner ") + alias + " ...)\n";
  out += std::string("\n") + tool.description + "\n\n";
  for (const ToolFlagSpec& flag : tool.flags) {
    std::string line = std::string("  --") + flag.name;
    if (line.size() < 26) line.resize(26, ' ');
    line += std::string(" ") + flag.help;
    if (flag.required) line += " (required)";
    if (flag.defaultText[0]) line += std::string(" (default ") + flag.defaultText + ")";
    if (!flag.choices.empty()) {
      line += ": ";
      for (size_t i = 0; i < flag.choices.size(); ++i) line += std::string(i ? "|" : "") + flag.choices[i];
    }
    out += line + "\n";
  }
  return out;
}

const LoraToolSpec* findLoraTool(const std::string& name) {
  for (const LoraToolSpec& tool : loraToolTable()) {
    if (name == tool.name) return &tool;
    for (const char* alias : tool.aliases)
      if (name == alias) return &tool;
  }
  return nullptr;
}

}  // namespace sinter
