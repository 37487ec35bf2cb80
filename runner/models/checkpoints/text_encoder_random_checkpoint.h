#pragma once
// FLUX's text encoder files with random weights, for tests, the demo and benchmarks
// (--init_checkpoint --model_family flux writes them beside the transformer): CLIP-L as
// clip_l.safetensors holds it (Hugging Face's "text_model.*" layout) and the T5-XXL encoder as
// t5xxl_fp16.safetensors does ("shared.weight", "encoder.block.N.*"), written one block at a time.
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/t5_encoder.h"

namespace sinter::models {

void writeRandomClipTextModel(const std::string& path, const ClipTextConfig& config, uint64_t seed, torch::Dtype dtype);
void writeRandomT5Encoder(const std::string& path, const T5EncoderConfig& config, uint64_t seed, torch::Dtype dtype);

// tiny: ClipTextConfig::tinyClipL() / T5EncoderConfig::tiny() in float32; full: CLIP ViT-L/14 in
// float16 (about 246 MB) / T5-XXL v1.1 in float16 (about 9.5 GB), as the files FLUX users download.
void writeRandomClipL(const std::string& path, bool tiny, uint64_t seed);
void writeRandomT5Xxl(const std::string& path, bool tiny, uint64_t seed);

}  // namespace sinter::models
