#include "sample/sample_naming.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace sinter::sample {

std::string sampleFileName(const std::string& outputName, long long step, std::optional<long long> epoch, const ResolvedSample& s,
                           std::time_t when) {
  char number[32], stamp[32];
  if (epoch) std::snprintf(number, sizeof number, "e%06lld", *epoch);
  else std::snprintf(number, sizeof number, "%06lld", step);
  std::tm local{};
  localtime_r(&when, &local);
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &local);
  char index[16];
  std::snprintf(index, sizeof index, "%02d", s.index);
  std::string name = (outputName.empty() ? "" : outputName + "_") + number + "_" + index + "_" + stamp;
  if (s.seedGiven) name += "_" + std::to_string(s.seed);
  return name + ".png";
}

std::string parametersText(const ResolvedSample& s, const std::string& model, long long step) {
  std::ostringstream out;
  out << s.prompt << "\n";
  if (!s.negativePrompt.empty()) out << "Negative prompt: " << s.negativePrompt << "\n";
  out << "Steps: " << s.steps << ", Sampler: " << s.sampler << ", CFG scale: " << s.scale;
  if (s.guidanceScale) out << ", Distilled CFG Scale: " << *s.guidanceScale;
  out << ", Seed: " << s.seed << ", Size: " << s.width << "x" << s.height;
  if (!model.empty()) out << ", Model: " << model;
  out << ", Training step: " << step << ", Version: Sinter";
  return out.str();
}

void fitSampleSize(ResolvedSample& s, int64_t multiple) {
  auto fit = [multiple](int v) {
    const int64_t atLeast64 = std::max(v, 64);
    return static_cast<int>(std::max(atLeast64 - atLeast64 % multiple, multiple));
  };
  s.width = fit(s.width);
  s.height = fit(s.height);
}

}  // namespace sinter::sample
