#pragma once
// What a sample image is called and what its PNG says about itself: sd-scripts' file names
// ("<output_name>_<step:06d | e<epoch:06d>>_<prompt index:02d>_<yyyymmddHHMMSS>[_<seed>].png" in
// <output_dir>/sample/) and A1111's "parameters" text, which image viewers and UIs read back.
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

namespace sinter::sample {

// A prompt's settings once the family's defaults are filled in.
struct ResolvedSample {
  int index = 0;
  std::string prompt, negativePrompt;
  int width = 512, height = 512, steps = 30;
  double scale = 7.5;                   // classifier-free guidance (1: none)
  std::optional<double> guidanceScale;  // FLUX dev's embedded guidance
  std::uint64_t seed = 0;
  bool seedGiven = false;               // --d: the file name carries it
  std::string samplerName;              // sd-scripts' name (sample_sampler, --ss)
  std::string sampler;                  // A1111's name ("DDIM", "Euler a", ...), set by the renderer
};

// The size the renderer uses: width and height rounded down to `multiple` px (the family's latent
// factor), at least 64 and at least one multiple, as sd-scripts rounds them.
void fitSampleSize(ResolvedSample& s, int64_t multiple);

// `epoch`: set when the samples are made at an epoch's end.
std::string sampleFileName(const std::string& outputName, long long step, std::optional<long long> epoch, const ResolvedSample& s,
                           std::time_t when);

// "<prompt>\nNegative prompt: <n>\nSteps: 30, Sampler: DDIM, CFG scale: 7.5, Seed: 1, Size: 512x512, ..."
std::string parametersText(const ResolvedSample& s, const std::string& model, long long step);

}  // namespace sinter::sample
