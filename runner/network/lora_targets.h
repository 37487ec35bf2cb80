#pragma once
// Which Linear layers sd-scripts' networks.lora puts a LoRA on by default for SDXL, and the kohya
// names it gives them. Pure functions over module paths, so the full-size naming can be listed
// from the layout listings without allocating a single weight.
//
// sd-scripts (networks/lora.py, LoRANetwork.create_modules) walks named_modules() and, inside
// every module whose class is a target, adds a LoRA to each Linear (and 1x1 Conv2d):
//   UNet:          Transformer2DModel (SAI: the SpatialTransformer at input_blocks.N.1, middle_block.1,
//                  output_blocks.N.1): proj_in, proj_out (Linear in SDXL), transformer_blocks.*.
//                  attn1/attn2 to_q/to_k/to_v/to_out.0, ff.net.0.proj, ff.net.2.
//                  ResBlocks, time/label embeddings and the 3x3 convs are only targeted with conv_dim.
//   text encoders: CLIPAttention (self_attn: q/k/v/out_proj) and CLIPMLP (mlp: fc1, fc2).
// The name is "<prefix>.<path>" with every '.' replaced by '_'.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sinter::network {

enum class LoraComponent { Unet, TextEncoder1, TextEncoder2 };

// "lora_unet", "lora_te1" (CLIP-L), "lora_te2" (OpenCLIP bigG).
const char* loraPrefix(LoraComponent component);
const char* componentLabel(LoraComponent component);  // "U-Net", "Text Encoder 1", ...

// "<prefix>_<modulePath with '.' as '_'>"
std::string kohyaLoraName(LoraComponent component, const std::string& modulePath);

// A Linear layer as a layout listing gives it: its module path and sizes.
struct LinearShape {
  std::string path;
  int64_t inFeatures = 0;
  int64_t outFeatures = 0;
};

// The transformer parents of a UNet: every path P such that P + ".transformer_blocks." prefixes
// some listed path (the SpatialTransformer / Transformer2DModel modules).
std::vector<std::string> unetTransformerParents(const std::vector<std::string>& modulePaths);

// Whether a Linear at `linearPath` is a default target, given the UNet's transformer parents.
bool isUnetLoraTarget(const std::string& linearPath, const std::vector<std::string>& transformerParents);
// Whether a text-encoder Linear is a default target: its parent is an attention ("self_attn") or
// MLP ("mlp") module, as CLIPAttention and CLIPMLP are in the Hugging Face layout.
bool isTextEncoderLoraTarget(const std::string& linearPath);

// A model family's rule for one of its models: the kohya prefix the adapters are named with, and
// which of the model's Linear layers (their paths, in module order) get one. Families declare
// their rules (SDXL below, FLUX next); the network applies whichever it is given.
struct LoraTargetRule {
  LoraComponent component = LoraComponent::Unet;
  std::function<std::vector<bool>(const std::vector<std::string>& linearPaths)> select;
};

// SDXL (networks.lora): the UNet's transformer Linears, the text encoders' attention and MLP ones.
LoraTargetRule sdxlLoraRule(LoraComponent component);

// FLUX (networks.lora_flux): every Linear inside the transformer's DoubleStreamBlocks (img/txt
// mod.lin, attn.qkv, attn.proj, mlp.0, mlp.2) and SingleStreamBlocks (linear1, linear2,
// modulation.lin): 19 x 10 + 38 x 3 = 304 at full size; `trainBlocks` ("all", "double",
// "single", sd-scripts' train_blocks network argument) keeps one kind only. Its CLIP-L (lora_te1)
// takes the text-encoder rule.
LoraTargetRule fluxLoraRule(LoraComponent component, const std::string& trainBlocks = "all");

// One LoRA module as it will be created: kohya name, module path, sizes.
struct LoraModuleShape {
  std::string name;
  std::string modulePath;
  LoraComponent component = LoraComponent::Unet;
  int64_t inFeatures = 0;
  int64_t outFeatures = 0;
};

// The LoRA modules sd-scripts creates for a model under `rule`, in the listing's order.
std::vector<LoraModuleShape> listLoraModules(const LoraTargetRule& rule, const std::vector<LinearShape>& linears);

}  // namespace sinter::network
