#pragma once
// An embedding file put on a family's text encoders to run them, not to train it: textual
// inversion's tokens (token_string, token_string1, ...) added to the tokenizer as a run adds them,
// and the file's rows (the config's `weights`, read by embedding_file.h) set as each encoder's
// added token rows. What `sinter-runner --module_outputs --weights EMB --token_string TOKEN` runs
// the encoders with (the families' module outputs), so that sd-scripts' own loading of the same file
// can be compared with ours (tests/gpu/ti_vs_sdscripts.py).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "train/parts/family_registration.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// The config's embedding (token_string, num_vectors_per_token, weights) on `targets`: the tokens
// added to targets.tokenizer, each encoder's rows from the file in float32 on its token table's
// device, without gradients. Returns the tokens' ids. Throws InputError naming token_string or
// weights where it is unset, token_string where the tokenizer has one of the tokens already or an
// encoder's token table does not end where the new ids start, and (readEmbeddingFile) the file and
// the key where a tensor is missing or of another shape.
std::vector<int32_t> putEmbeddingOnEncoders(const TextualInversionTargets& targets, const Config& config);

// A prompt's token ids as a family's text encoders take them: named [chunks, 77] tensors.
using PromptTokenIds = std::function<std::vector<std::pair<std::string, torch::Tensor>>(
    const text::ClipTokenizer& tokenizer, const std::string& prompt, int maxTokenLength)>;

// --module_outputs' text inputs for a family that trains textual inversion: where the config names an
// embedding (`weights`) or the inputs a prompt, the CLIP tokenizer (clip_tokenizer) with the
// embedding's tokens added and its rows put on the encoders `targets` gives; the prompt's ids
// (`promptIds`, max_token_length) added to `tensors` (addPromptInput) and written to `out`, whose
// metadata names the file and the prompt.
void addEmbeddingAndPrompt(const Config& config, const ModuleInputs& inputs,
                           const std::function<TextualInversionTargets(text::ClipTokenizer&)>& targets,
                           const PromptTokenIds& promptIds, std::map<std::string, torch::Tensor>& tensors, ModuleOutputs& out);

}  // namespace sinter::train
