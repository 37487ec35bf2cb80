#pragma once
// Facts about kohya_ss's GUI fields that have no Sinter option: their defaults, and which of them
// never reach the trained weights.
#include <nlohmann/json.hpp>
#include <string>

namespace sinter {

// The value kohya_ss's GUI gives the field when a config does not set it (its gr.* control's
// value, or config.get("section.key", default)); nullptr when this import has no record of it.
const nlohmann::json* kohyaGuiDefault(const std::string& key);

// Fields that change how a run is launched or how fast it goes, never what it trains; returns why,
// or "" for a field that can change training.
std::string kohyaNoEffectOnTraining(const std::string& key);

// The model families kohya_ss passes the field on for, when it is only some ("SD3" for sd3_... and
// weighting_scheme, "FLUX.1" for flux1_... and split_mode); "" for a field every family uses.
std::string kohyaOnlyFor(const std::string& key);

}  // namespace sinter
