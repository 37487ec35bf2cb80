#include "text/clip_token_chunks.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sinter::text {

std::vector<std::vector<int32_t>> clipTokenChunks(const std::vector<int32_t>& tokens, int32_t bos, int32_t eos,
                                                  ClipPadding padding, int maxTokenLength) {
  constexpr int kContext = ClipTokenizer::kContextLength;  // 77
  constexpr int kChunk = kContext - 2;                      // 75 text positions per chunk
  if (maxTokenLength != 0 && maxTokenLength != 75 && maxTokenLength != 150 && maxTokenLength != 225) {
    throw std::invalid_argument("max_token_length must be 75, 150 or 225 (or unset), got " +
                                std::to_string(maxTokenLength));
  }
  const int32_t pad = padding == ClipPadding::EndOfText ? eos : 0;
  const int textLength = maxTokenLength == 0 ? kChunk : maxTokenLength;

  // The whole sequence, as the tokenizer would give it for max_length = textLength + 2.
  std::vector<int32_t> sequence;
  sequence.reserve(textLength + 2);
  sequence.push_back(bos);
  const std::size_t kept = std::min<std::size_t>(tokens.size(), textLength);
  sequence.insert(sequence.end(), tokens.begin(), tokens.begin() + kept);
  sequence.push_back(eos);
  sequence.resize(textLength + 2, pad);
  if (textLength == kChunk) return {sequence};

  std::vector<std::vector<int32_t>> chunks;
  const int sequenceLength = textLength + 2;
  for (int start = 1; start < sequenceLength - kContext + 2; start += kChunk) {
    std::vector<int32_t> chunk;
    chunk.reserve(kContext);
    chunk.push_back(sequence.front());
    chunk.insert(chunk.end(), sequence.begin() + start, sequence.begin() + start + kChunk);
    chunk.push_back(sequence.back());
    if (pad != eos) {
      // Text running up to the chunk's end gets an eos; an empty chunk starts with bos, eos.
      if (chunk[kContext - 2] != eos && chunk[kContext - 2] != pad) chunk[kContext - 1] = eos;
      if (chunk[1] == pad) chunk[1] = eos;
    }
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

std::vector<std::vector<int32_t>> clipTokenChunks(const ClipTokenizer& tokenizer, const std::string& text,
                                                  ClipPadding padding, int maxTokenLength) {
  return clipTokenChunks(tokenizer.encode(text), tokenizer.bosId(), tokenizer.eosId(), padding, maxTokenLength);
}

SdxlTokenChunks sdxlTokenChunks(const ClipTokenizer& tokenizer, const std::string& text, int maxTokenLength) {
  const std::vector<int32_t> tokens = tokenizer.encode(text);
  return {clipTokenChunks(tokens, tokenizer.bosId(), tokenizer.eosId(), ClipPadding::EndOfText, maxTokenLength),
          clipTokenChunks(tokens, tokenizer.bosId(), tokenizer.eosId(), ClipPadding::Zero, maxTokenLength)};
}

}  // namespace sinter::text
