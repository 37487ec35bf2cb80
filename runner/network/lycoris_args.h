#pragma once
// network_args of lycoris.kohya (LyCORIS's create_network), read as it reads them: every value
// arrives as a string; flags are LyCORIS's str_bool (anything but "false", any case, is true),
// except decompose_both, which it tests as the raw string (so "False" turns it on, as it does in
// LyCORIS); use_cp, use_conv_cp and disable_conv_cp are its deprecated names of use_tucker.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/adapters/lycoris_weights.h"
#include "network/lycoris_targets.h"

namespace sinter::network {

struct LycorisArgs {
  models::LycorisAlgo algo = models::LycorisAlgo::LoCon;
  std::optional<int64_t> convDim;   // conv_dim: network_dim when unset (or 0 given as "")
  std::optional<double> convAlpha;  // conv_alpha: network_alpha when unset
  double dropout = 0.0;             // dropout (LyCORIS's own; bypass outputs only)
  double rankDropout = 0.0;
  double moduleDropout = 0.0;
  bool useTucker = false;
  bool useScalar = false;
  bool decomposeBoth = false;
  int64_t factor = -1;
  bool doraWd = false;
  bool bypassMode = false;
  LycorisPreset preset = LycorisPreset::Full;
  // Keys LyCORIS's create_network accepts but never reads (rank_dropout_scale, train_on_input,
  // verbose): they change nothing there, nor here; the run says so.
  std::vector<std::string> unread;
};

// Every key parseLycorisArgs accepts (core/kohya_network.cpp keeps the same list).
const std::vector<std::string>& supportedLycorisArgs();

// `args` as key/value pairs in their order; loraplus_* are the caller's. A LoraError-style
// std::invalid_argument names the key for values it cannot read, algorithms and presets this
// build does not train (dylora, glora, diag-oft, boft; ia3 and preset files), train_norm, and
// combinations LyCORIS itself refuses (algo=full with bypass_mode).
LycorisArgs parseLycorisArgs(const std::vector<std::pair<std::string, std::string>>& args);
// Why dim_from_weights is refused with lycoris.kohya (the preflight and the network both say it).
std::string lycorisDimFromWeightsRefusal();

}  // namespace sinter::network
