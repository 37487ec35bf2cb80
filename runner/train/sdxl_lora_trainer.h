#pragma once
// SDXL LoRA training: from images and captions to a kohya-format LoRA file.
#include "core/config.h"
#include "data/dataset.h"
#include "train/event_sink.h"

namespace sinter::train {

// `config` and `dataset` come from preflightRun. Returns 0 when completed or stopped on request; throws on errors. `trainingStarted` turns true
// once setup is done, so the caller can tell bad input (before) from a failed run (after).
int trainSdxlLora(const Config& config, data::Dataset dataset, EventSink& events, bool& trainingStarted);

}  // namespace sinter::train
