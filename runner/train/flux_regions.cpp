#include "train/flux_regions.h"

namespace sinter::train {

void captureFluxBlocks(models::FluxTransformer& transformer, GraphedRegions& regions) {
  models::FluxTransformerImpl* model = transformer.get();
  model->setBlockRunner([model, &regions](const std::string& region, const std::vector<torch::Tensor>& inputs,
                                          const models::FluxTransformerImpl::BlockBody& body) {
    if (model->gradientCheckpointing()) return model->runBlockDefault(inputs, body);
    return regions.run(region, inputs, body);
  });
}

void releaseFluxBlocks(models::FluxTransformer& transformer) { transformer->setBlockRunner(nullptr); }

}  // namespace sinter::train
