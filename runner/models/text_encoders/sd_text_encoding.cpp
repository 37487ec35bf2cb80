#include "models/text_encoders/sd_text_encoding.h"

#include <stdexcept>
#include <string>

#include "models/text_encoders/sdxl_text_encoding.h"

namespace sinter::models {

int64_t sdTextLayersToRun(SdVersion version, int64_t layers, int64_t clipSkip) {
  // SD 2.x: sd-scripts' model has one layer less than the checkpoint.
  const int64_t modelLayers = version == SdVersion::V2 ? layers - 1 : layers;
  if (clipSkip < 1 || clipSkip > modelLayers)
    throw std::invalid_argument("clip_skip = " + std::to_string(clipSkip) + " is outside 1.." + std::to_string(modelLayers) +
                                " for this text encoder's " + std::to_string(modelLayers) + " layers");
  return modelLayers + 1 - clipSkip;
}

torch::Tensor encodeSdText(ClipTextTransformer& textModel, const torch::Tensor& ids, int64_t layersToRun) {
  TORCH_CHECK(ids.dim() == 3, "SD text encoding: token chunks must be [batch, chunks, tokens], got ", ids.sizes());
  const int64_t batch = ids.size(0), chunks = ids.size(1), tokens = ids.size(2);
  const ClipTextOutput out = textModel->forward(ids.reshape({batch * chunks, tokens}), layersToRun);
  const torch::Tensor hidden = textModel->finalLayerNorm()(out.hiddenStates.back());
  return mergeChunkHiddenStates(hidden, batch, chunks);
}

}  // namespace sinter::models
