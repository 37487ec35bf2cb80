#pragma once
// Per-step caption processing as sd-scripts' BaseDataset.process_caption does it: prefix/suffix,
// caption dropout, wildcards, tag shuffling with kept leading tags, tag dropout, token warm-up,
// then the replacements.
#include <string>
#include <vector>

#include "data/random.h"

namespace sinter::data {

// A replacement made after the rest of the processing (sd-scripts' add_replacement, which textual
// inversion uses: data/textual_inversion_captions.h): `from` in the caption becomes `to`'s one
// entry, or, with `from` empty, the whole caption becomes one of `to`, picked at random.
struct CaptionReplacement {
  std::string from;
  std::vector<std::string> to;
};

struct CaptionSettings {
  std::string captionPrefix;
  std::string captionSuffix;
  bool shuffleCaption = false;
  std::string captionSeparator = ",";
  int keepTokens = 0;
  std::string keepTokensSeparator;  // empty: none
  std::string secondarySeparator;   // empty: none
  bool enableWildcard = false;
  double captionDropoutRate = 0;
  int captionDropoutEveryNEpochs = 0;
  double captionTagDropoutRate = 0;
  int tokenWarmupMin = 1;
  double tokenWarmupStep = 0;  // < 1: a fraction of max_train_steps
  std::vector<CaptionReplacement> replacements;  // in order, not on a dropped caption
};

struct CaptionContext {
  int epoch = 1;              // 1-based, as sd-scripts' current_epoch during training
  long long step = 0;         // global step, for token warm-up
  long long maxTrainSteps = 0;
};

// The caption used for one sample. `rng` supplies every random decision.
std::string processCaption(const std::string& caption, const CaptionSettings& settings, const CaptionContext& context,
                           Rng& rng);

// True when processCaption gives the same text every time (so text-encoder outputs can be
// cached): no dropout, shuffling, tag dropout, warm-up, wildcards or replacement picked at random.
bool captionIsFixed(const CaptionSettings& settings);

// Python's str.strip() for ASCII whitespace.
std::string stripWhitespace(const std::string& s);

}  // namespace sinter::data
