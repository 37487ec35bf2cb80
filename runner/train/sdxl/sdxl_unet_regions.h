#pragma once
// SDXL's regions for per-block CUDA graphs (compile_fullgraph=false): each U-Net input, middle and
// output block, by its checkpoint name, with its inputs (h, emb, context). With gradient
// checkpointing the blocks run as by default, checkpointed and eager (the plan says so).
#include "models/unet/sdxl_unet.h"
#include "train/capture/graphed_regions.h"

namespace sinter::train {

// The U-Net's blocks run through `regions` from now on (`regions` must outlive their use).
void captureUnetBlocks(models::SdxlUnet& unet, GraphedRegions& regions);
// The blocks run as by default again.
void releaseUnetBlocks(models::SdxlUnet& unet);

}  // namespace sinter::train
