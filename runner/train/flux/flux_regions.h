#pragma once
// FLUX's regions for per-block CUDA graphs (compile_fullgraph=false): each double and single block
// of the transformer, by its checkpoint name ("double_blocks.N", "single_blocks.N"), with the
// inputs FluxTransformer's block seam gives it. With gradient checkpointing the blocks run as by
// default, checkpointed and eager (the plan says so).
#include "models/flux/flux_transformer.h"
#include "train/capture/graphed_regions.h"

namespace sinter::train {

// The transformer's blocks run through `regions` from now on (`regions` must outlive their use).
void captureFluxBlocks(models::FluxTransformer& transformer, GraphedRegions& regions);
// The blocks run as by default again.
void releaseFluxBlocks(models::FluxTransformer& transformer);

}  // namespace sinter::train
