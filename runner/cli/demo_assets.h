#pragma once
// Inputs for the bundled demo and for tests, made on the spot (nothing is downloaded):
// a small dataset of generated pictures with captions, a byte-level CLIP vocabulary and a small
// SentencePiece model for T5.
#include <cstdint>
#include <string>

namespace sinter::runner {

// Writes `count` PNG pictures (simple coloured shapes of a few sizes, deterministic from `seed`)
// with matching .txt captions into <dir>/10_demo shapes/ (sd-scripts folder mode: 10 repeats).
void writeDemoDataset(const std::string& dir, int count, std::uint64_t seed);

// Writes vocab.json + merges.txt of a CLIP byte-level BPE vocabulary: every byte and every byte
// with "</w>" at CLIP's ids (0-511), merges spelling the demo's caption words, <|startoftext|>
// 49406 and <|endoftext|> 49407.
// Enough for tiny demo models; full-size models need the real CLIP tokenizer files.
void writeByteLevelClipVocabulary(const std::string& dir);

// Writes spiece.model: a SentencePiece unigram model with T5's special ids (<pad> 0, </s> 1,
// <unk> 2), the demo's caption words and the lowercase letters, 45 pieces in all (within the tiny
// T5's vocabulary of 64). Enough for tiny demo models; full-size models need T5's own spiece.model.
void writeDemoT5Tokenizer(const std::string& dir);

}  // namespace sinter::runner
