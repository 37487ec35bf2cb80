#pragma once
// FLUX.1 files: the transformer in BFL's single-file layout (flux1-dev.safetensors,
// flux1-schnell.safetensors, or ComfyUI's saves of them under "model.diffusion_model.") and the
// autoencoder (ae.safetensors). Family and variant come from the keys, sizes from the shapes.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "models/autoencoders/flux_autoencoder.h"
#include "models/flux/flux_config.h"
#include "models/flux/flux_transformer.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

// dev when the file has guidance_in.* (as sd-scripts' analyze_checkpoint_state decides), Chroma
// when it has distilled_guidance_layer.* (sd-scripts takes --model_type chroma; Sinter reads it from
// the keys), schnell when it has FLUX's double_blocks/single_blocks without either, nullopt when it is no FLUX
// transformer in BFL's layout. Either key prefix ("" or "model.diffusion_model.").
std::optional<FluxVariant> detectFluxVariant(const io::SafetensorsFile& file);

// The transformer, sized from the file and loaded into `dtype` on the CPU. CheckpointError for a
// file of another family or layout (named), or listing missing keys and wrong shapes;
// io::SafetensorsError for a file that is not valid safetensors.
FluxTransformer loadFluxTransformer(const io::SafetensorsFile& file, torch::Dtype dtype = torch::kFloat32);
FluxTransformer loadFluxTransformer(const std::string& path, torch::Dtype dtype = torch::kFloat32);

// The autoencoder of ae.safetensors (keys encoder.*, decoder.*), in `dtype` on the CPU.
FluxAutoencoder loadFluxAutoencoder(const io::SafetensorsFile& file, torch::Dtype dtype = torch::kFloat32);
FluxAutoencoder loadFluxAutoencoder(const std::string& path, torch::Dtype dtype = torch::kFloat32);

}  // namespace sinter::models
