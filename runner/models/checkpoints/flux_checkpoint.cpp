#include "models/checkpoints/flux_checkpoint.h"

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/layers/parameters_from_checkpoint.h"

namespace sinter::models {

namespace {

// Why a file is not a BFL-layout FLUX transformer, for the error message.
std::string notFluxReason(const io::SafetensorsFile& file) {
  if (file.hasKeyStartingWith("transformer_blocks.") || file.hasKeyStartingWith("single_transformer_blocks."))
    return "this looks like a diffusers-layout FLUX transformer; Sinter reads BFL's single-file layout "
           "(double_blocks.N.*, single_blocks.N.*)";
  if (file.has("encoder.conv_in.weight") && file.has("decoder.conv_out.weight"))
    return "this looks like an autoencoder (ae.safetensors), not the transformer";
  const std::string family = describeCheckpointFamily(file);
  return family.empty() ? "no img_in.weight with double_blocks.N.* or single_blocks.N.* keys" : family;
}

}  // namespace

std::optional<FluxVariant> detectFluxVariant(const io::SafetensorsFile& file) {
  const std::string prefix = FluxTransformerImpl::checkpointPrefix(file);
  if (!file.has(prefix + "img_in.weight") ||
      !(file.hasKeyStartingWith(prefix + "double_blocks.") || file.hasKeyStartingWith(prefix + "single_blocks.")))
    return std::nullopt;
  if (file.has(prefix + "distilled_guidance_layer.in_proj.weight")) return FluxVariant::Chroma;
  return file.has(prefix + "guidance_in.in_layer.bias") || file.has(prefix + "guidance_in.in_layer.weight")
             ? FluxVariant::Dev
             : FluxVariant::Schnell;
}

FluxTransformer loadFluxTransformer(const io::SafetensorsFile& file, torch::Dtype dtype) {
  if (!detectFluxVariant(file))
    throw CheckpointError(file.path() + ": not a FLUX.1 transformer: " + notFluxReason(file));
  const std::string prefix = FluxTransformerImpl::checkpointPrefix(file);
  const FluxConfig config = FluxConfig::inferFromCheckpoint(file, prefix);
  FluxTransformer model{nullptr};
  {
    const ParametersFromCheckpoint fromFile;  // the file's values overwrite them
    model = FluxTransformer(config);
  }
  model->to(dtype);
  model->loadFromCheckpoint(file, prefix);
  return model;
}

FluxTransformer loadFluxTransformer(const std::string& path, torch::Dtype dtype) {
  const io::SafetensorsFile file(path);
  return loadFluxTransformer(file, dtype);
}

FluxAutoencoder loadFluxAutoencoder(const io::SafetensorsFile& file, torch::Dtype dtype) {
  if (detectFluxVariant(file))
    throw CheckpointError(file.path() + ": this is a FLUX transformer, not the autoencoder (ae.safetensors)");
  const FluxAutoencoderConfig config = FluxAutoencoderConfig::inferFromCheckpoint(file, "");
  FluxAutoencoder ae{nullptr};
  {
    const ParametersFromCheckpoint fromFile;  // the file's values overwrite them
    ae = FluxAutoencoder(config);
  }
  ae->to(dtype);
  ae->loadFromCheckpoint(file, "");
  return ae;
}

FluxAutoencoder loadFluxAutoencoder(const std::string& path, torch::Dtype dtype) {
  const io::SafetensorsFile file(path);
  return loadFluxAutoencoder(file, dtype);
}

}  // namespace sinter::models
