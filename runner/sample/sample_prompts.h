#pragma once
// sd-scripts' sample_prompts files (train_util.load_prompts): a .txt file with one prompt a line
// ("#" lines and blank lines skipped) and its options after " --": --n negative prompt, --w / --h
// size, --d seed, --s steps (clamped to 1..1000), --l CFG scale, --g guidance scale (FLUX),
// --ss sampler, and for other sd-scripts models --cn control image, --ctr CFG truncation ratio,
// --rcfg renormalised CFG, --fs flow shift; a .toml file with a [prompt] table of defaults and [[prompt.subset]] entries; a
// .json file with a list of such lines or of objects with the same keys. Where sd-scripts logs a
// bad option and goes on, this parser refuses it, naming the file and the line.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sample/sample_naming.h"

namespace sinter::sample {

class PromptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SamplePrompt {
  int index = 0;  // position in the file ("enum"), which names the image
  std::string prompt, negativePrompt;
  std::optional<int> width, height, steps;
  std::optional<std::int64_t> seed;
  std::optional<double> scale, guidanceScale;
  std::optional<std::string> sampler;  // sd-scripts' sampler names (sampleSamplerNames)
  std::optional<std::string> controlnetImage;
  std::optional<double> cfgTruncRatio, renormCfg, flowShift;
  std::string where;                   // "file:line" (or "file: entry N" for .json)
};

// The sampler names sd-scripts' --sample_sampler and --ss accept.
const std::vector<std::string>& sampleSamplerNames();

// One text line's prompt and options; `where` prefixes each error.
SamplePrompt parsePromptLine(const std::string& line, const std::string& where);

// By extension: .txt, .toml or .json; anything else, or a file that cannot be read, is an error.
std::vector<SamplePrompt> loadSamplePrompts(const std::string& file);

// A prompt's settings: its options over the family's `defaults` for what it leaves unset (--g only
// where the family has a guidance scale); the seed is its --d, else `seedWhenUnset`.
ResolvedSample resolveSample(const ResolvedSample& defaults, const SamplePrompt& prompt, std::uint64_t seedWhenUnset);

}  // namespace sinter::sample
