#include "train/methods/textual_inversion_options.h"

#include "text/bundled_tokenizers.h"
#include "text/clip_tokenizer.h"

namespace sinter::train {

TextualInversionOptions TextualInversionOptions::fromConfig(const Config& config) {
  TextualInversionOptions o;
  o.captions = data::TextualInversionCaptions::fromConfig(config);
  o.initWord = config.getString("init_word");
  o.weightsFile = config.getString("weights");
  o.learningRate = config.getDouble("learning_rate");
  if (!config.getString("save_precision").empty()) o.savePrecision = config.getString("save_precision");
  return o;
}

std::optional<Refusal> textualInversionRefusal(const Config& config) {
  const TextualInversionOptions o = TextualInversionOptions::fromConfig(config);
  if (o.captions.tokenString.empty())
    return Refusal{"token_string", "token_string is not set: textual inversion trains an embedding for a new token (token_string = "
                                   "\"mytoken\", a string the tokenizer does not have)"};
  for (const char* key : {"cache_text_encoder_outputs", "cache_text_encoder_outputs_to_disk"})
    if (config.getBool(key))
      return Refusal{key, std::string(key) + ": textual inversion trains the text encoders' rows of the new tokens, so their outputs "
                          "change every step (sd-scripts' textual inversion scripts cache none): set it to false"};
  // The tokens the run adds (token_string, token_string1, ...) must all be new, as sd-scripts asserts.
  const text::ClipTokenizer tokenizer =
      text::ClipTokenizer::fromPath(text::tokenizerFolder("clip_tokenizer", config.getString("clip_tokenizer"), "clip"));
  for (const std::string& token : data::textualInversionTokens(o.captions.tokenString, o.captions.vectors))
    if (tokenizer.hasToken(token))
      return Refusal{"token_string", "token_string: the tokenizer already has the token \"" + token + "\" (" + tokenizer.source() +
                                         "); choose a string it does not have, as sd-scripts requires"};
  return std::nullopt;
}

}  // namespace sinter::train
