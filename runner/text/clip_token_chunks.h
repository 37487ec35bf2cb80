#pragma once
// Token sequences for SDXL's text encoders, built as sd-scripts builds them
// (library/strategy_base.py TokenizeStrategy._get_input_ids):
//  - without max_token_length: [bos] + the first 75 tokens + [eos], padded to 77;
//  - with max_token_length 150 or 225: the text is truncated to that many tokens, laid out as one
//    long [bos] tokens [eos] pad... sequence, and cut into max_token_length/75 chunks of 77, each
//    [bos] + 75 positions + the sequence's last id. With eos padding (CLIP-L) nothing else
//    changes; with zero padding (bigG) a chunk whose text runs to its last position ends in eos,
//    and an empty chunk reads [bos, eos, pad...].
#include <cstdint>
#include <vector>

#include "text/clip_tokenizer.h"

namespace sinter::text {

// CLIP-L pads with <|endoftext|>; sd-scripts sets tokenizer2.pad_token_id = 0 for OpenCLIP bigG.
enum class ClipPadding { EndOfText, Zero };

// maxTokenLength: 0 (sd-scripts' None: 75 tokens, one chunk), 75, 150 or 225; anything else
// throws std::invalid_argument. Returns maxTokenLength/75 chunks (at least 1) of 77 ids.
std::vector<std::vector<int32_t>> clipTokenChunks(const std::vector<int32_t>& tokensWithoutSpecials,
                                                  int32_t bosId, int32_t eosId, ClipPadding padding,
                                                  int maxTokenLength);

std::vector<std::vector<int32_t>> clipTokenChunks(const ClipTokenizer& tokenizer, const std::string& text,
                                                  ClipPadding padding, int maxTokenLength);

// Both SDXL encoders' chunks from one tokenization: CLIP-L padded with eos, bigG with 0.
struct SdxlTokenChunks {
  std::vector<std::vector<int32_t>> clipL;
  std::vector<std::vector<int32_t>> bigG;
};
SdxlTokenChunks sdxlTokenChunks(const ClipTokenizer& tokenizer, const std::string& text, int maxTokenLength);

}  // namespace sinter::text
