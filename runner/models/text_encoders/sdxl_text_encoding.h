#pragma once
// SDXL's text conditioning from its two encoders, as sd-scripts computes it
// (library/strategy_sdxl.py SdxlTextEncodingStrategy):
//   context = concat(CLIP-L hidden_states[11], bigG hidden_states[-2]) along features
//   pooled  = bigG's projected pooled output
// With max_token_length (n = 2 or 3 chunks of 77 per caption), every chunk is encoded on its own
// and the results are merged back into one sequence of n*75 + 2 positions: the first chunk's bos
// position, each chunk's 75 text positions, and the last chunk's final position. The pooled
// vector is the first chunk's.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/open_clip_text_model.h"

namespace sinter::models {

struct SdxlTextConditioning {
  torch::Tensor context;  // [B, 77 or n*75+2, clipL.width + bigG.width], in CLIP-L's output dtype
  torch::Tensor pooled;   // [B, bigG.projectionDim]
};

// clipLIds, bigGIds: [B, n, 77] token chunks (n >= 1) from text/clip_token_chunks.h (CLIP-L padded
// with <|endoftext|>, bigG with 0). The adm vector's size/crop part: models/unet/sdxl_size_conditioning.h.
SdxlTextConditioning encodeSdxlText(ClipTextModel& clipL, OpenClipTextModel& bigG, const torch::Tensor& clipLIds,
                                    const torch::Tensor& bigGIds);

// hidden: [B*n, T, W] per-chunk states (chunks of one caption consecutive); returns [B, T, W] when
// n == 1, else [B, n*(T-2)+2, W] merged as described above.
torch::Tensor mergeChunkHiddenStates(const torch::Tensor& hidden, int64_t batch, int64_t chunks);

// The merged sequence's length for `chunks` chunks of 77 (77, 152, 227), and back.
inline int64_t mergedContextLength(int64_t chunks) { return chunks * 75 + 2; }
inline int64_t chunksOfContextLength(int64_t length) { return (length - 2) / 75; }

// [B, n, 77] int64 ids from per-caption chunk lists (every caption must have the same count).
torch::Tensor tokenChunksTensor(const std::vector<std::vector<std::vector<int32_t>>>& captionChunks);

}  // namespace sinter::models
