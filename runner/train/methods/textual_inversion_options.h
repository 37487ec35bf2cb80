#pragma once
// Textual inversion's options (sd-scripts' train_textual_inversion.py and
// sdxl_train_textual_inversion.py), typed, and what this build refuses of them before any model
// loads (the preflight and the method ask the same function).
#include <optional>
#include <string>

#include "core/config.h"
#include "data/textual_inversion_captions.h"
#include "train/methods/full_weights_method.h"  // Refusal

namespace sinter::train {

struct TextualInversionOptions {
  data::TextualInversionCaptions captions;  // token_string, num_vectors_per_token, the templates
  std::string initWord;                     // init_word; empty: the vocabulary's mean embedding
  std::string weightsFile;                  // weights: an embedding to continue from
  double learningRate = 0;
  std::optional<std::string> savePrecision;

  static TextualInversionOptions fromConfig(const Config& config);
};

// Why the config's textual inversion run cannot be trained, or nullopt: token_string unset, one of
// the new tokens already in the CLIP tokenizer (sd-scripts refuses it too), cached text encoder
// outputs (the new rows change them every step; sdxl_train_textual_inversion.py has no caching).
// `config`'s values have parsed.
std::optional<Refusal> textualInversionRefusal(const Config& config);

}  // namespace sinter::train
