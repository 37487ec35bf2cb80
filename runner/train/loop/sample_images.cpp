#include "train/loop/sample_images.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <random>

#include "sample/png_file.h"
#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/loop/save_schedule.h"

namespace sinter::train {

namespace fs = std::filesystem;

sample::SampleSchedule sampleScheduleFromConfig(const Config& config) {
  sample::SampleSchedule s;
  if (config.getString("sample_prompts").empty()) return s;
  s.atFirst = config.getBool("sample_at_first");
  s.everyNSteps = optionalInt(config, "sample_every_n_steps");
  s.everyNEpochs = optionalInt(config, "sample_every_n_epochs");
  return s;
}

SampleImages::SampleImages(const RunContext& run, FamilyPart& family, RunEma* ema, std::vector<data::CaptionReplacement> promptReplacements)
    : run_(run),
      family_(family),
      schedule_(sampleScheduleFromConfig(run.config)),
      folder_(fs::absolute(fs::path(run.config.getString("output_dir")) / "sample").lexically_normal().string()),
      outputName_(runOutputName(run.config)),
      modelName_(family.facts().checkpointFile),
      ema_(ema),
      promptReplacements_(std::move(promptReplacements)) {
  if (const std::string file = run.config.getString("sample_prompts"); !file.empty()) prompts_ = sample::loadSamplePrompts(file);
}

sample::SamplePrompt replacedPrompt(const sample::SamplePrompt& p, const std::vector<data::CaptionReplacement>& replacements) {
  sample::SamplePrompt prompt = p;
  for (const data::CaptionReplacement& r : replacements) {
    if (r.to.empty() || r.from.empty()) continue;
    const auto replace = [&](std::string& text) {
      for (size_t at = text.find(r.from); at != std::string::npos; at = text.find(r.from, at + r.to.front().size()))
        text.replace(at, r.from.size(), r.to.front());
    };
    replace(prompt.prompt);
    replace(prompt.negativePrompt);
  }
  return prompt;
}

sample::ResolvedSample SampleImages::resolve(const sample::SamplePrompt& p) const {
  // Without --d sd-scripts draws a fresh seed; this one is recorded in the PNG so it can be repeated.
  return sample::resolveSample(family_.sampleDefaults(), replacedPrompt(p, promptReplacements_), std::random_device{}() & 0x7fffffffu);
}

double SampleImages::make(long long step, std::optional<long long> epoch, bool textEncodersTrain) {
  const auto start = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  // ema_for_samples: the EMA's weights in the models while the images render, the trained ones after.
  const EmaWeightsForSamples emaWeights(ema_);
  spdlog::info("generating sample images at step {}{}", step, emaWeights.shown() ? " from the EMA of the weights" : "");
  try {
    fs::create_directories(folder_);
    for (const sample::SamplePrompt& prompt : prompts_) {
      const auto imageStart = std::chrono::steady_clock::now();
      sample::ResolvedSample s = resolve(prompt);
      const torch::Tensor image = family_.renderSample(s, makeGenerator(run_.device, s.seed));
      const std::string path = (fs::path(folder_) / sample::sampleFileName(outputName_, step, epoch, s, std::time(nullptr))).string();
      nlohmann::json settings{{"prompt", s.prompt},   {"negative_prompt", s.negativePrompt}, {"width", s.width},
                              {"height", s.height},   {"sample_steps", s.steps},             {"scale", s.scale},
                              {"seed", s.seed},       {"sample_sampler", s.samplerName},     {"step", step},
                              {"model", modelName_}};
      if (s.guidanceScale) settings["guidance_scale"] = *s.guidanceScale;
      if (epoch) settings["epoch"] = *epoch;
      if (emaWeights.shown()) settings["ema"] = true;
      sample::writePng(path, sample::imageToRgb8(image),
                       {{"parameters", sample::parametersText(s, modelName_, step)}, {"sinter", settings.dump()}});
      const double seconds = since(imageStart);
      spdlog::info("sample {} ({:.1f} s): {}", path, seconds, s.prompt);
      run_.events.emit(events::Sample{path, s.prompt, step, epoch.value_or(0), s.index, seconds});
    }
  } catch (const std::exception& e) {
    const std::string message = "sample images at step " + std::to_string(step) + " failed: " + e.what();
    spdlog::warn("{}", message);
    run_.events.emit(events::Warning{message});
  }
  family_.setTraining(textEncodersTrain);
  return since(start);
}

}  // namespace sinter::train
