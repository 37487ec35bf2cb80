#include "models/text_encoders/sdxl_text_encoding.h"

#include <stdexcept>
#include <string>

namespace sinter::models {

namespace idx = torch::indexing;

torch::Tensor mergeChunkHiddenStates(const torch::Tensor& hidden, int64_t batch, int64_t chunks) {
  TORCH_CHECK(hidden.dim() == 3 && hidden.size(0) == batch * chunks, "hidden states ", hidden.sizes(),
              " do not hold ", chunks, " chunk(s) for each of ", batch, " caption(s)");
  const int64_t length = hidden.size(1), textPositions = length - 2;
  const torch::Tensor sequence = hidden.reshape({batch, chunks * length, hidden.size(2)});
  if (chunks == 1) return sequence;
  std::vector<torch::Tensor> parts;
  parts.reserve(chunks + 2);
  parts.push_back(sequence.index({idx::Slice(), idx::Slice(0, 1)}));  // the first bos
  for (int64_t start = 1; start < chunks * length; start += length) {
    parts.push_back(sequence.index({idx::Slice(), idx::Slice(start, start + textPositions)}));
  }
  parts.push_back(sequence.index({idx::Slice(), idx::Slice(-1, idx::None)}));  // eos or pad of the last chunk
  return torch::cat(parts, 1);
}

SdxlTextConditioning encodeSdxlText(ClipTextModel& clipL, OpenClipTextModel& bigG, const torch::Tensor& clipLIds,
                                    const torch::Tensor& bigGIds) {
  TORCH_CHECK(clipLIds.dim() == 3 && bigGIds.sizes() == clipLIds.sizes(),
              "SDXL text encoding: token chunks must be [batch, chunks, tokens] for both encoders, got ",
              clipLIds.sizes(), " and ", bigGIds.sizes());
  const int64_t batch = clipLIds.size(0), chunks = clipLIds.size(1), tokens = clipLIds.size(2);
  const torch::Tensor flatL = clipLIds.reshape({batch * chunks, tokens});
  const torch::Tensor flatG = bigGIds.reshape({batch * chunks, tokens});

  const torch::Tensor hiddenL = clipL->penultimateHiddenState(flatL);
  const OpenClipTextOutput outG = bigG->forward(flatG);

  SdxlTextConditioning out;
  const torch::Tensor mergedL = mergeChunkHiddenStates(hiddenL, batch, chunks);
  const torch::Tensor mergedG = mergeChunkHiddenStates(outG.penultimateHiddenState, batch, chunks);
  out.context = torch::cat({mergedL, mergedG.to(mergedL.scalar_type())}, 2);
  // The first chunk of each caption gives the pooled vector.
  out.pooled = outG.pooled.reshape({batch, chunks, -1}).select(1, 0);
  return out;
}

torch::Tensor tokenChunksTensor(const std::vector<std::vector<std::vector<int32_t>>>& captionChunks) {
  if (captionChunks.empty() || captionChunks.front().empty() || captionChunks.front().front().empty()) {
    throw std::invalid_argument("token chunks: no captions or empty chunks");
  }
  const int64_t batch = captionChunks.size(), chunks = captionChunks.front().size(),
                tokens = captionChunks.front().front().size();
  torch::Tensor ids = torch::empty({batch, chunks, tokens}, torch::kLong);
  auto access = ids.accessor<int64_t, 3>();
  for (int64_t b = 0; b < batch; ++b) {
    if (static_cast<int64_t>(captionChunks[b].size()) != chunks) {
      throw std::invalid_argument("token chunks: caption " + std::to_string(b) + " has " +
                                  std::to_string(captionChunks[b].size()) + " chunks, caption 0 has " +
                                  std::to_string(chunks));
    }
    for (int64_t c = 0; c < chunks; ++c) {
      if (static_cast<int64_t>(captionChunks[b][c].size()) != tokens) {
        throw std::invalid_argument("token chunks: caption " + std::to_string(b) + " chunk " + std::to_string(c) +
                                    " has " + std::to_string(captionChunks[b][c].size()) + " ids, expected " +
                                    std::to_string(tokens));
      }
      for (int64_t t = 0; t < tokens; ++t) access[b][c][t] = captionChunks[b][c][t];
    }
  }
  return ids;
}

}  // namespace sinter::models
