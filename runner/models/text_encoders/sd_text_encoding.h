#pragma once
// SD 1.x/2.x text conditioning, as sd-scripts computes it (library/strategy_sd.py
// SdTextEncodingStrategy): context = final_layer_norm(hidden_states[-clip_skip]) of the one text
// encoder, where hidden_states is what sd-scripts' model gives:
//  - SD 1.x, CLIP ViT-L (12 layers): clip_skip 1 (unset) is the last layer, 2 the penultimate;
//  - SD 2.x, OpenCLIP ViT-H: sd-scripts converts it to a 23-layer CLIPTextModel (the checkpoint's
//    last layer is dropped, SD 2.x conditions on the penultimate), so clip_skip 1 is layer 23 of 24.
// With max_token_length, chunks are encoded on their own and merged as for SDXL
// (models/text_encoders/sdxl_text_encoding.h mergeChunkHiddenStates). sd-scripts' SD 2.x merge has a branch for
// empty chunks that compares a token id with the string "<|endoftext|>" and so never runs; the
// merge is therefore the same for both versions.
#include <torch/torch.h>

#include <cstdint>

#include "models/text_encoders/clip_text_model.h"
#include "models/checkpoints/sd_checkpoint.h"

namespace sinter::models {

// How many of the encoder's `layers` run for `clipSkip` (>= 1): hidden_states[-clip_skip] is the
// output of that many layers.
int64_t sdTextLayersToRun(SdVersion version, int64_t layers, int64_t clipSkip);

// ids: [B, n, 77] token chunks (text/clip_token_chunks.h: SD 1.x padded with <|endoftext|>, SD 2.x
// with 0). Returns [B, 77 or n*75+2, width].
torch::Tensor encodeSdText(ClipTextTransformer& textModel, const torch::Tensor& ids, int64_t layersToRun);

}  // namespace sinter::models
