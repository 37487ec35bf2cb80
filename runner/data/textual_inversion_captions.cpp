#include "data/textual_inversion_captions.h"

namespace sinter::data {

std::vector<std::string> textualInversionTokens(const std::string& tokenString, int vectors) {
  std::vector<std::string> tokens{tokenString};
  for (int i = 1; i < vectors; ++i) tokens.push_back(tokenString + std::to_string(i));
  return tokens;
}

// The sentences of sd-scripts' lists, in their order (the template is picked by its index).
const std::vector<std::string>& objectCaptionTemplates() {
  static const std::vector<std::string> templates{
      "a photo of a {}",         "a rendering of a {}",      "a cropped photo of the {}", "the photo of a {}",
      "a photo of a clean {}",   "a photo of a dirty {}",    "a dark photo of the {}",    "a photo of my {}",
      "a photo of the cool {}",  "a close-up photo of a {}", "a bright photo of the {}",  "a cropped photo of a {}",
      "a photo of the {}",       "a good photo of the {}",   "a photo of one {}",         "a close-up photo of the {}",
      "a rendition of the {}",   "a photo of the clean {}",  "a rendition of a {}",       "a photo of a nice {}",
      "a good photo of a {}",    "a photo of the nice {}",   "a photo of the small {}",   "a photo of the weird {}",
      "a photo of the large {}", "a photo of a cool {}",     "a photo of a small {}",
  };
  return templates;
}

const std::vector<std::string>& styleCaptionTemplates() {
  static const std::vector<std::string> templates{
      "a painting in the style of {}",         "a rendering in the style of {}",  "a cropped painting in the style of {}",
      "the painting in the style of {}",       "a clean painting in the style of {}", "a dirty painting in the style of {}",
      "a dark painting in the style of {}",    "a picture in the style of {}",    "a cool painting in the style of {}",
      "a close-up painting in the style of {}", "a bright painting in the style of {}", "a cropped painting in the style of {}",
      "a good painting in the style of {}",    "a close-up painting in the style of {}", "a rendition in the style of {}",
      "a nice painting in the style of {}",    "a small painting in the style of {}", "a weird painting in the style of {}",
      "a large painting in the style of {}",
  };
  return templates;
}

TextualInversionCaptions TextualInversionCaptions::fromConfig(const Config& config) {
  TextualInversionCaptions c;
  c.tokenString = config.getString("token_string");
  c.vectors = static_cast<int>(config.getInt("num_vectors_per_token"));
  c.objectTemplate = config.getBool("use_object_template");
  c.styleTemplate = config.getBool("use_style_template");
  return c;
}

std::string TextualInversionCaptions::joinedTokens() const {
  std::string joined;
  for (const std::string& token : textualInversionTokens(tokenString, vectors)) joined += (joined.empty() ? "" : " ") + token;
  return joined;
}

std::optional<CaptionReplacement> TextualInversionCaptions::captionReplacement() const {
  if (objectTemplate || styleTemplate) {
    CaptionReplacement r;  // "" replaces the whole caption by one of `to`
    const std::string tokens = joinedTokens();
    for (std::string t : objectTemplate ? objectCaptionTemplates() : styleCaptionTemplates())
      r.to.push_back(t.replace(t.find("{}"), 2, tokens));
    return r;
  }
  return promptReplacement();
}

std::optional<CaptionReplacement> TextualInversionCaptions::promptReplacement() const {
  if (vectors <= 1) return std::nullopt;
  return CaptionReplacement{tokenString, {joinedTokens()}};
}

}  // namespace sinter::data
