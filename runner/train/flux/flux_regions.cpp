#include "train/flux/flux_regions.h"

namespace sinter::train {

void captureFluxBlocks(models::FluxTransformer& transformer, GraphedRegions& regions) {
  models::FluxTransformerImpl* model = transformer.get();
  model->setBlockRunner([model, &regions](const std::string& region, const std::vector<torch::Tensor>& inputs,
                                          const models::FluxTransformerImpl::BlockBody& body) {
    // Swapped blocks' weights arrive on a side stream from host memory during the step: eager.
    if (model->gradientCheckpointing() || model->streamsWeights(region)) return model->runBlockDefault(inputs, body);
    return regions.run(region, inputs, body);
  });
}

void releaseFluxBlocks(models::FluxTransformer& transformer) { transformer->setBlockRunner(nullptr); }

}  // namespace sinter::train
