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
//                  With conv_dim, conv_block_dims or weights to load from, also ResnetBlock2D,
//                  Downsample2D and Upsample2D (SAI: input_blocks.N.0, middle_block.0/2,
//                  output_blocks.N.0, their .op and .conv): emb_layers.1 and the 1x1 skip_connection
//                  at network_dim, the 3x3 in_layers.2, out_layers.3, op and conv at conv_dim.
//                  Time/label embeddings, conv_in and out are never targeted.
//   text encoders: CLIPAttention (self_attn: q/k/v/out_proj) and CLIPMLP (mlp: fc1, fc2).
// The name is "<prefix>.<path>" with every '.' replaced by '_'.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sinter::network {

enum class LoraComponent { Unet, TextEncoder1, TextEncoder2, TextEncoder, TextEncoder3 };

// "lora_unet", "lora_te1" (CLIP-L), "lora_te2" (OpenCLIP bigG), "lora_te" (SD 1.x/2.x's one encoder),
// "lora_te3" (FLUX's T5-XXL, networks.lora_flux's name for ComfyUI).
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
// sd-scripts' network module whose names, network_args and LyCORIS containers a rule follows: the
// module, not the family (SD 1.x/2.x and SDXL share networks.lora).
enum class LoraNetworkModule { Lora, LoraFlux, LoraSd3 };  // networks.lora, networks.lora_flux, networks.lora_sd3
// "networks.lora_flux" -> LoraFlux, "networks.lora_sd3" -> LoraSd3, anything else (networks.lora) -> Lora.
LoraNetworkModule loraNetworkModuleNamed(const std::string& networkModule);
const char* loraNetworkModuleName(LoraNetworkModule module);  // "networks.lora", ...

struct LoraTargetRule {
  LoraComponent component = LoraComponent::Unet;
  LoraNetworkModule module = LoraNetworkModule::Lora;
  std::function<std::vector<bool>(const std::vector<std::string>& linearPaths)> select;
  // sd-scripts' Conv2d-3x3 target modules (ResnetBlock2D, Downsample2D, Upsample2D), which
  // conv_dim, conv_block_dims or weights to load from add: given module paths (Linears or Conv2ds),
  // which lie inside one. Unset where the model has none (text encoders, FLUX).
  std::function<std::vector<bool>(const std::vector<std::string>& paths)> selectInConvBlocks;
  // The module path sd-scripts' model has where ours differs (SD 1.x/2.x: diffusers' names for the
  // SAI layout's UNet), which the kohya name is made from. Unset: the same path.
  std::function<std::string(const std::string& modulePath)> sdScriptsPath;
  // Modules our model has and sd-scripts' does not (SD 2.x: the checkpoint's last text-encoder
  // layer, which sd-scripts drops): never given an adapter. Unset: none.
  std::function<bool(const std::string& modulePath)> notInSdScriptsModel;
  // sd-scripts walks Linears and 1x1 Conv2ds alike (SD 1.x's transformer projections are 1x1
  // convs): `select` is also given the 1x1 Conv2ds' paths.
  bool selectsConv1x1 = false;
};

// The kohya name of the module at `modulePath` under `rule`: kohyaLoraName of its sd-scripts path.
std::string loraModuleName(const LoraTargetRule& rule, const std::string& modulePath);

// SD 1.x/2.x: sd-scripts loads their UNet in diffusers' layout, so a module of the SAI layout
// (input_blocks.4.1.proj_in, output_blocks.2.1.conv, middle_block.0.in_layers.2) is named after its
// diffusers path (down_blocks.1.attentions.0.proj_in, up_blocks.0.upsamplers.0.conv,
// mid_block.resnets.0.conv1). `numResBlocks`: the UNet's ResBlocks per level (2 at full size).
// Paths outside the blocks are returned unchanged.
std::string sdDiffusersUnetPath(const std::string& saiPath, int64_t numResBlocks);

// Whether an SDXL UNet module path (SAI layout) lies inside a ResBlock, a Downsample or an Upsample.
bool isSdxlConvBlockPath(const std::string& path);

// sd-scripts' get_block_index for SDXL (networks/lora.py): 0 time_embed/label_emb, 1-9
// input_blocks.0-8, 10-12 middle_block.0-2, 13-21 output_blocks.0-8, 22 out; -1 for other names.
int sdxlBlockIndex(const std::string& loraName);
constexpr int kSdxlBlockCount = 23;

// SDXL (networks.lora): the UNet's transformer Linears, the text encoders' attention and MLP ones.
LoraTargetRule sdxlLoraRule(LoraComponent component);

// SD 1.x/2.x (networks.lora, train_network.py): the SDXL rule's choice (transformer Linears and 1x1
// convs, the conv blocks with conv_dim) under diffusers' names for the UNet, "lora_te" for the text
// encoder. SD 2.x's encoder: sd-scripts' model has 23 of the checkpoint's 24 layers, so
// `textEncoderLayers` (23) leaves the last layer's Linears out; 0 keeps every layer.
LoraTargetRule sdLoraRule(LoraComponent component, int64_t numResBlocks, int64_t textEncoderLayers = 0);

// FLUX (networks.lora_flux): every Linear inside the transformer's DoubleStreamBlocks (img/txt
// mod.lin, attn.qkv, attn.proj, mlp.0, mlp.2) and SingleStreamBlocks (linear1, linear2,
// modulation.lin): 19 x 10 + 38 x 3 = 304 at full size; `trainBlocks` ("all", "double",
// "single", sd-scripts' train_blocks network argument) keeps one kind only. Its CLIP-L (lora_te1)
// takes the text-encoder rule.
LoraTargetRule fluxLoraRule(LoraComponent component, const std::string& trainBlocks = "all");
// FLUX's T5-XXL (lora_te3, network_args train_t5xxl): networks.lora_flux's text-encoder targets
// T5Attention (SelfAttention: q, k, v, o) and T5DenseGatedActDense (DenseReluDense: wi_0, wi_1,
// wo), 24 x 7 = 168 at full size.
LoraTargetRule fluxT5LoraRule();
// Whether a T5 Linear is one of those: its parent is "SelfAttention" or "DenseReluDense".
bool isT5LoraTarget(const std::string& linearPath);

// SD 3.x (networks.lora_sd3): every Linear inside the MMDiT's SingleDiTBlocks (joint_blocks.N.
// context_block / x_block: attn.qkv, attn.proj, attn2.qkv/proj (MMDiT-X), mlp.fc1, mlp.fc2,
// adaLN_modulation.1; the last context block only qkv and adaLN): 24 x 10 - 3 = 237 for SD 3
// Medium, 263 for 3.5 Medium (attn2 in 13 blocks), 377 for 3.5 Large. Its CLIP-L (lora_te1) and CLIP-G (lora_te2) take the text-encoder rule, T5-XXL (lora_te3,
// train_t5xxl) FLUX's T5 rule. `embDims` (network_args emb_dims, [context, t, x, y, final_mod,
// final_linear]): the MMDiT's embedders and final layer whose rank is not 0 are chosen too, the
// x_embedder's 2x2 patch conv among the conv targets.
LoraTargetRule sd3LoraRule(LoraComponent component, const std::vector<int64_t>& embDims = {});
// Which emb_dims entry a kohya name of the MMDiT falls under (lora_sd3's filters: "context_embedder",
// "_t_embedder", "x_embedder", "y_embedder", "final_layer_adaLN_modulation", "final_layer_linear").
std::optional<size_t> sd3EmbeddingPart(const std::string& loraName);

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
