#include "train/sdxl/sdxl_unet_regions.h"

namespace sinter::train {

void captureUnetBlocks(models::SdxlUnet& unet, GraphedRegions& regions) {
  models::SdxlUnetImpl* model = unet.get();
  model->setBlockRunner([model, &regions](const std::string& region, models::SdxlUnetBlock& block, const torch::Tensor& h,
                                          const torch::Tensor& emb, const torch::Tensor& context) {
    if (model->gradientCheckpointing()) return model->runBlockDefault(block, h, emb, context);
    models::SdxlUnetBlock b = block;
    return regions.run(region, {h, emb, context},
                       [b](const std::vector<torch::Tensor>& in) mutable { return b->forward(in[0], in[1], in[2]); });
  });
}

void releaseUnetBlocks(models::SdxlUnet& unet) { unet->setBlockRunner(nullptr); }

}  // namespace sinter::train
