#include "train/sd3/sd3_model_set.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/sd3_checkpoint.h"
#include "models/layers/parameters_from_checkpoint.h"

namespace sinter::train {

namespace {

// Where a CLIP's "text_model.*" keys start in a file.
std::string sd3ClipPrefix(const io::SafetensorsFile& file, bool bigG) {
  const std::string own = bigG ? models::kSd3ClipGPrefix : models::kSd3ClipLPrefix;
  for (const std::string candidate : {std::string(), own, std::string(bigG ? "clip_g." : "clip_l.") + "transformer."})
    if (file.has(candidate + "text_model.embeddings.token_embedding.weight")) return candidate;
  return "";  // inferFromCheckpoint then names the key it expected
}

}  // namespace

Sd3ClipShape sd3ClipShape(const io::SafetensorsFile& file, bool bigG) {
  Sd3ClipShape shape;
  shape.prefix = sd3ClipPrefix(file, bigG);
  shape.config = models::ClipTextModelImpl::inferFromCheckpoint(file, shape.prefix);
  if (bigG) shape.config.activation = models::ClipActivation::Gelu;
  shape.projectionStored = file.has(shape.prefix + "text_projection.weight");
  shape.config.projectionDim =
      shape.projectionStored ? models::requireShape(file, shape.prefix, "text_projection.weight", bigG ? "CLIP-G" : "CLIP-L")[0]
                             : shape.config.width;
  return shape;
}

models::ClipTextModel loadSd3Clip(const io::SafetensorsFile& file, bool bigG) {
  const Sd3ClipShape shape = sd3ClipShape(file, bigG);
  models::ClipTextModel clip{nullptr};
  {
    const models::ParametersFromCheckpoint fromFile;  // the file's values overwrite them
    clip = models::ClipTextModel(shape.config);
  }
  models::loadModuleFromCheckpoint(*clip->textModel(), file, shape.prefix + "text_model.",
                                   bigG ? "CLIP-G text encoder" : "CLIP-L text encoder");
  torch::NoGradGuard noGrad;
  if (shape.projectionStored) clip->text_projection->weight.copy_(file.tensor(shape.prefix + "text_projection.weight"));
  else clip->text_projection->weight.copy_(torch::eye(shape.config.width));
  return clip;
}

Sd3ModelSet loadSd3ModelSet(const Sd3ModelFiles& files) {
  const io::SafetensorsFile checkpoint(files.checkpoint);
  Sd3ModelSet set;
  set.mmdit = models::loadSd3Mmdit(checkpoint);
  if (!files.vae.empty()) {
    const io::SafetensorsFile vaeFile(files.vae);
    const std::string prefix = vaeFile.hasKeyStartingWith(models::kSd3VaePrefix) ? models::kSd3VaePrefix : "";
    {
      const models::ParametersFromCheckpoint fromFile;
      set.vae = models::FluxAutoencoder(models::sd3VaeConfig(models::FluxAutoencoderConfig::inferFromCheckpoint(vaeFile, prefix)));
    }
    set.vae->loadFromCheckpoint(vaeFile, prefix);
  } else {
    set.vae = models::loadSd3Vae(checkpoint);
  }
  auto clip = [&](const std::string& path, bool bigG) {
    const char* key = bigG ? "clip_g" : "clip_l";
    if (!path.empty()) return loadSd3Clip(io::SafetensorsFile(path), bigG);
    if (!checkpoint.hasKeyStartingWith(bigG ? models::kSd3ClipGPrefix : models::kSd3ClipLPrefix))
      throw models::CheckpointError(files.checkpoint + " holds no " + (bigG ? "CLIP-G" : "CLIP-L") + " (text_encoders." + key +
                                    ".*): give " + key + " (" + key + ".safetensors), as sd-scripts takes it");
    return loadSd3Clip(checkpoint, bigG);
  };
  set.clipL = clip(files.clipL, false);
  set.clipG = clip(files.clipG, true);
  // sd3_utils.load_t5xxl: the checkpoint's own T5-XXL first, then the t5xxl file.
  std::optional<io::SafetensorsFile> t5Separate;
  if (models::sd3CheckpointHoldsT5xxl(checkpoint)) {
    if (!files.t5xxl.empty()) spdlog::info("T5-XXL is read from {} (it holds one), not from t5xxl, as sd-scripts reads it", files.checkpoint);
    set.t5 = models::loadT5Encoder(checkpoint, models::kSd3T5xxlPrefix);
    set.t5File = files.checkpoint;
  } else if (!files.t5xxl.empty()) {
    t5Separate.emplace(files.t5xxl);
    set.t5 = models::loadT5Encoder(*t5Separate, "");
    set.t5File = files.t5xxl;
  } else {
    throw models::CheckpointError("t5xxl is not set and " + files.checkpoint +
                                  " holds no T5-XXL: SD 3.x training needs the T5-XXL encoder (t5xxl_fp16.safetensors)");
  }
  {
    const io::SafetensorsFile& t5File = t5Separate ? *t5Separate : checkpoint;  // the file just read, not opened again
    const std::string probe = (t5Separate ? std::string() : std::string(models::kSd3T5xxlPrefix)) +
                              "encoder.block.0.layer.0.SelfAttention.q.weight";
    set.t5StoredInFloat8 = t5File.has(probe) && t5File.info(probe).dtype == "F8_E4M3";
  }
  // The MMDiT's conditioning widths are the encoders' outputs: a mismatch is a wrong file.
  const models::Sd3MmditConfig& c = set.mmdit->config();
  const int64_t lg = set.clipL->config().width + set.clipG->config().width;
  const int64_t pooled = set.clipL->config().projectionDim + set.clipG->config().projectionDim;
  if (set.t5->config().dModel != c.contextInFeatures || lg > c.contextInFeatures || pooled != c.admInChannels)
    throw models::CheckpointError("the text encoders do not fit " + files.checkpoint + "'s MMDiT (context " +
                                  std::to_string(c.contextInFeatures) + " wide, pooled " + std::to_string(c.admInChannels) +
                                  "): CLIP-L " + std::to_string(set.clipL->config().width) + " + CLIP-G " +
                                  std::to_string(set.clipG->config().width) + " wide, pooled " + std::to_string(pooled) +
                                  ", T5 " + std::to_string(set.t5->config().dModel));
  return set;
}

torch::Tensor Sd3ModelSet::encodeLatents(const torch::Tensor& images, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const torch::Dtype dtype = vae->encoder->conv_in->weight.scalar_type();
  return vae->encodeToLatents(images.to(dtype), /*sample=*/true, generator);
}

}  // namespace sinter::train
