#pragma once
// Which Linear and Conv2d layers lycoris.kohya puts a module on, per preset (lycoris/config.py
// PRESET), in sd-scripts' SDXL, FLUX and SD 3.x models. LyCORIS walks named_modules() and, inside every
// module whose class is one of the preset's target classes, adapts each Linear and each Conv2d
// (a conv with a kernel other than 1x1 only while the preset enables convs and conv_dim > 0). Its
// target names (conv_in, conv_out, time_embedding.linear_1/2) match no module of these models.
// The classes, as paths of this build's models (SAI layout for the SDXL UNet, Hugging Face for
// the text encoders, BFL for FLUX):
//   Transformer2DModel  the UNet's SpatialTransformers (input_blocks.N.1, middle_block.1, output_blocks.N.1)
//   ResnetBlock2D       input_blocks.N.0, middle_block.0/2, output_blocks.N.0 (in_layers, emb_layers, out_layers, skip_connection)
//   Downsample2D        input_blocks.N.0.op;  Upsample2D  output_blocks.N.M.conv
//   CrossAttention      a transformer block's attn1 and attn2
//   CLIPAttention       self_attn;  CLIPMLP  mlp
//   DoubleStreamBlock   double_blocks.N;  SingleStreamBlock  single_blocks.N;  SelfAttention  double_blocks.N.img_attn/txt_attn
//   SingleDiTBlock      SD 3.x's joint_blocks.N.context_block and .x_block (T5-XXL has no target class)
// Names are LyCORIS's: "<lora_unet|lora_te1|lora_te2>_<path with '.' as '_'>", as networks.lora's.
#include <optional>
#include <string>
#include <vector>

#include "network/lora_targets.h"

namespace sinter::network {

enum class LycorisPreset { Full, FullLin, AttnMlp, AttnOnly, UnetTransformerOnly, UnetConvblockOnly };

// "full", "full-lin", "attn-mlp", "attn-only", "unet-transformer-only", "unet-convblock-only".
const std::vector<std::string>& lycorisPresetNames();
std::optional<LycorisPreset> parseLycorisPreset(const std::string& name);
// Whether the preset adapts convs with kernels other than 1x1 (its enable_conv).
bool lycorisPresetEnablesConv(LycorisPreset preset);

// A Linear or Conv2d of a model, by its path; kernel 0 for a Linear.
struct LayerPath {
  std::string path;
  int64_t kernel = 0;
};

// Per layer, whether LyCORIS's preset puts a module on it: inside a target class, and for a conv
// whose kernel is not 1x1 only where the preset enables convs and `convDim` > 0.
std::vector<bool> lycorisSelect(LycorisPreset preset, LoraNetworkModule module, LoraComponent component,
                                const std::vector<LayerPath>& layers, int64_t convDim);

}  // namespace sinter::network
