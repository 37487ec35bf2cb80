#pragma once
// Where new token rows start (textual inversion and pivotal tuning alike): sd-scripts' rule.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "text/clip_tokenizer.h"

namespace sinter::train {

// init_word's token ids before any new token exists (sd-scripts encodes it first, without bos/eos);
// empty for an empty init_word. Throws InputError for a word without tokens; warns where its tokens
// are repeated or cut to `vectors`.
std::vector<int32_t> initWordIds(const text::ClipTokenizer& tokenizer, const std::string& initWord, int vectors);

// `vectors` rows of `table` (float32, CPU): init_word's token rows repeated or cut to fit
// (init_token_ids[i % len]), or the table's mean (transformers' resize_token_embeddings, its
// 1e-9-covariance noise left out) where there are no ids.
torch::Tensor initialEmbeddingRows(const torch::Tensor& table, const std::vector<int32_t>& initIds, int64_t vectors);

}  // namespace sinter::train
