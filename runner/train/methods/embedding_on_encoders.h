#pragma once
// An embedding file put on a family's text encoders to run them, not to train it: textual
// inversion's tokens (token_string, token_string1, ...) added to the tokenizer as a run adds them,
// and the file's rows (the config's `weights`, read by embedding_file.h) set as each encoder's
// added token rows. What `sinter-runner --module_outputs --weights EMB --token_string TOKEN` runs
// the encoders with (the families' module outputs), so that sd-scripts' own loading of the same file
// can be compared with ours (tests/gpu/ti_vs_sdscripts.py).
#include <cstdint>
#include <vector>

#include "core/config.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// The config's embedding (token_string, num_vectors_per_token, weights) on `targets`: the tokens
// added to targets.tokenizer, each encoder's rows from the file in float32 on its token table's
// device, without gradients. Returns the tokens' ids. Throws InputError naming token_string or
// weights where it is unset, token_string where the tokenizer has one of the tokens already or an
// encoder's token table does not end where the new ids start, and (readEmbeddingFile) the file and
// the key where a tensor is missing or of another shape.
std::vector<int32_t> putEmbeddingOnEncoders(const TextualInversionTargets& targets, const Config& config);

}  // namespace sinter::train
