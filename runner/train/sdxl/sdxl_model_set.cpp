#include "train/sdxl/sdxl_model_set.h"

#include "io/safetensors.h"
#include "models/checkpoints/sdxl_checkpoint.h"
#include "models/weights/served_weight.h"
#include "train/base/mixed_precision.h"

namespace sinter::train {

SdxlWeightPlacement SdxlWeightPlacement::fromConfig(const Config& config) {
  SdxlWeightPlacement p;
  p.fp8Unet = config.getBool("fp8_base") || config.getBool("fp8_base_unet");
  p.fp8TextEncoders = p.fp8Unet && !config.getBool("fp8_base_unet");
  return p;
}

void SdxlModelSet::castInPlace(torch::Dtype dtype, std::optional<torch::Dtype> trainableDtype, std::optional<torch::Dtype> vaeDtype,
                               const SdxlWeightPlacement& placement) {
  for (torch::nn::Module* m : std::initializer_list<torch::nn::Module*>{unet.get(), clipL.get(), bigG.get()}) {
    castFrozen(*m, trainableDtype.value_or(dtype));
    if (!(m == unet.get() ? placement.fp8Unet : placement.fp8TextEncoders)) continue;
    models::storeLinearsInFloat8(*m);
    if (m == unet.get()) models::storeConvolutionsInFloat8(*m);
  }
  castFrozen(*vae, vaeDtype.value_or(dtype == torch::kHalf ? torch::kFloat32 : dtype));
}

void SdxlModelSet::toDevice(const torch::Device& device, torch::Dtype dtype, std::optional<torch::Dtype> trainableDtype,
                            std::optional<torch::Dtype> vaeDtype, const SdxlWeightPlacement& placement) {
  castInPlace(dtype, trainableDtype, vaeDtype, placement);
  for (torch::nn::Module* m : std::initializer_list<torch::nn::Module*>{unet.get(), clipL.get(), bigG.get(), vae.get()})
    models::moveToDevice(*m, device);
}

void SdxlModelSet::setTraining(bool textEncoders) {
  unet->train();
  vae->eval();
  clipL->train(textEncoders);
  bigG->train(textEncoders);
}

torch::Tensor SdxlModelSet::encodeLatents(const torch::Tensor& images, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const torch::Dtype vaeDtype = vae->quant_conv->weight.scalar_type();
  return vae->encodeToLatents(images.to(vaeDtype), /*sample=*/true, generator);
}

SdxlModelSet loadSdxlModelSet(const std::string& checkpointPath, const std::string& vaePath) {
  models::SdxlCheckpoint checkpoint = models::loadSdxlCheckpoint(checkpointPath);
  SdxlModelSet set{checkpoint.unet, checkpoint.vae, checkpoint.clipL, checkpoint.bigG};
  if (!vaePath.empty()) {
    io::SafetensorsFile file(vaePath);
    // A separate VAE file is stored either bare or with the checkpoint's prefix.
    const std::string prefix = file.has(std::string(models::SdxlVaeImpl::kPrefix) + "encoder.conv_in.weight") ? models::SdxlVaeImpl::kPrefix : "";
    set.vae = models::SdxlVae(models::SdxlVaeImpl::inferFromCheckpoint(file, prefix));
    set.vae->loadFromCheckpoint(file, prefix);
  }
  return set;
}

}  // namespace sinter::train
