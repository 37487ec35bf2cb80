#pragma once
// Sample images during training (issue 11): the prompts of sample_prompts rendered by the family
// when sample/sample_schedule.h says, written as PNGs with their settings into
// <output_dir>/sample/, each reported by a `sample` event. The loop keeps the time this takes out
// of the step times, it/s and ETA.
#include <optional>
#include <string>
#include <vector>

#include "sample/sample_prompts.h"
#include "sample/sample_schedule.h"
#include "train/loop/run_ema.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// sample_at_first, sample_every_n_steps, sample_every_n_epochs; no trigger without sample_prompts.
sample::SampleSchedule sampleScheduleFromConfig(const Config& config);

// `prompt` with each replacement made in its prompt and negative prompt, in order (sd-scripts'
// prompt_replacement; MethodPart::samplePromptReplacements: the new tokens). The run's samples
// and the checkpoint grid's read their prompts through it.
sample::SamplePrompt replacedPrompt(const sample::SamplePrompt& prompt, const std::vector<data::CaptionReplacement>& replacements);

class SampleImages {
 public:
  // Reads the prompt file (checked in the preflight) when there is one: the schedule samples from
  // it, and so does the control channel's "sample" without a schedule (run_controls.h). `ema`: the
  // run's EMA, whose weights the images show with ema_for_samples; or null.
  // `promptReplacements`: what the method replaces in each prompt and negative prompt before it is
  // rendered, in order (MethodPart::samplePromptReplacements: the new tokens).
  SampleImages(const RunContext& run, FamilyPart& family, RunEma* ema = nullptr,
               std::vector<data::CaptionReplacement> promptReplacements = {});

  const sample::SampleSchedule& schedule() const { return schedule_; }
  bool hasPrompts() const { return !prompts_.empty(); }

  // Renders every prompt with the models as they are at `step` (`epoch` when at an epoch's end)
  // and restores the models' training state (`textEncodersTrain`). Returns the seconds it took.
  // A failure is reported as a warning and training goes on; the files made so far stay.
  double make(long long step, std::optional<long long> epoch, bool textEncodersTrain);

 private:
  sample::ResolvedSample resolve(const sample::SamplePrompt& prompt) const;

  const RunContext& run_;
  FamilyPart& family_;
  sample::SampleSchedule schedule_;
  std::vector<sample::SamplePrompt> prompts_;
  std::string folder_, outputName_, modelName_;
  RunEma* ema_;
  std::vector<data::CaptionReplacement> promptReplacements_;
};

}  // namespace sinter::train
