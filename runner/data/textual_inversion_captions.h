#pragma once
// Textual inversion's captions, as sd-scripts' train_textual_inversion.py makes them: the new
// tokens (token_string, token_string1, ..., one per vector), and the caption replacement the
// dataset applies after the rest of its processing (caption.h): with use_object_template or
// use_style_template every caption becomes one of the imagenet templates holding the tokens; else,
// with several vectors, token_string in a caption becomes all of them joined by spaces.
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/caption.h"

namespace sinter::data {

// "tok", "tok1", ..., "tok<n-1>".
std::vector<std::string> textualInversionTokens(const std::string& tokenString, int vectors);

// sd-scripts' imagenet_templates_small and imagenet_style_templates_small, "{}" where the tokens go.
const std::vector<std::string>& objectCaptionTemplates();
const std::vector<std::string>& styleCaptionTemplates();

struct TextualInversionCaptions {
  std::string tokenString;
  int vectors = 1;
  bool objectTemplate = false, styleTemplate = false;  // the object templates win when both are set, as in sd-scripts

  // token_string, num_vectors_per_token, use_object_template, use_style_template.
  static TextualInversionCaptions fromConfig(const Config& config);
  // The tokens joined by spaces: what stands for token_string in a caption or prompt.
  std::string joinedTokens() const;
  // What the dataset replaces (nullopt: nothing, one vector without a template).
  std::optional<CaptionReplacement> captionReplacement() const;
  // What sample prompts replace (sd-scripts' prompt_replacement): token_string by the joined tokens
  // where there are several; nullopt with one vector.
  std::optional<CaptionReplacement> promptReplacement() const;
};

}  // namespace sinter::data
