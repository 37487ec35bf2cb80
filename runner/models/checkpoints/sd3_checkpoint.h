#pragma once
// SD 3 / 3.5 single files as SAI releases them (sd3_medium.safetensors, sd3.5_medium.safetensors,
// sd3.5_large.safetensors, the _incl_clips variants): the MMDiT under model.diffusion_model., the
// 16-channel VAE under first_stage_model. (FLUX's autoencoder with SD 3's scale and shift), and,
// in some files, the text encoders under text_encoders.clip_l/clip_g/t5xxl.transformer.; sd-scripts
// takes the text encoders from --clip_l/--clip_g/--t5xxl files otherwise (Hugging Face layouts).
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "models/autoencoders/flux_autoencoder.h"
#include "models/sd3/sd3_mmdit.h"
#include "models/text_encoders/clip_text_model.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

inline constexpr const char* kSd3MmditPrefix = "model.diffusion_model.";
inline constexpr const char* kSd3VaePrefix = "first_stage_model.";
inline constexpr const char* kSd3ClipLPrefix = "text_encoders.clip_l.transformer.";
inline constexpr const char* kSd3ClipGPrefix = "text_encoders.clip_g.transformer.";
inline constexpr const char* kSd3T5xxlPrefix = "text_encoders.t5xxl.transformer.";

// Whether a file holds an SD 3 MMDiT (model.diffusion_model.joint_blocks.*), as sd-scripts' SD 3 scripts expect.
bool isSd3Checkpoint(const io::SafetensorsFile& file);
// Whether it holds T5-XXL too (sd3_medium_incl_clips_t5xxlfp16): the key sd3_utils.load_t5xxl looks for,
// whose T5 sd-scripts takes before a --t5xxl file.
bool sd3CheckpointHoldsT5xxl(const io::SafetensorsFile& file);

// sd3_models' VAE_SCALE_FACTOR / VAE_SHIFT_FACTOR on FLUX's (the same) autoencoder architecture.
FluxAutoencoderConfig sd3VaeConfig(const FluxAutoencoderConfig& sizes);

enum class Sd3Variant { Medium, Medium35, Large35 };
const char* sd3VariantName(Sd3Variant v);  // "medium", "3.5-medium", "3.5-large"
Sd3MmditConfig sd3MmditConfig(Sd3Variant v);
// sai_model_spec's architecture: "stable-diffusion-3-medium", "stable-diffusion-3-5-medium", "stable-diffusion-3-5-large".
std::string sd3ModelSpecArchitecture(const Sd3MmditConfig& config);

// The MMDiT and the VAE of a file, sized from it and loaded into `dtype` on the CPU; a
// CheckpointError names the file and what it lacks.
Sd3Mmdit loadSd3Mmdit(const io::SafetensorsFile& file, torch::Dtype dtype = torch::kFloat32);
FluxAutoencoder loadSd3Vae(const io::SafetensorsFile& file, torch::Dtype dtype = torch::kFloat32);

// Random files for tests, demos and benchmarks: the MMDiT, VAE, CLIP-L and CLIP-G in one file (as
// the _incl_clips releases), written one joint block at a time; tiny: Sd3MmditConfig::tiny() with
// the tiny VAE and tiny SD 3 CLIPs in float32, full: the variant's sizes in bfloat16.
void writeRandomSd3Checkpoint(const std::string& path, Sd3Variant variant, bool tiny, uint64_t seed);

}  // namespace sinter::models
