#include "train/optim/dadaptation_args.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/ascii_text.h"
#include "core/optimizer_table.h"
#include "network/python_format.h"
#include "train/optim/optimizer.h"

namespace sinter::train {

namespace {

// The keys each class's constructor takes, besides lr (sd-scripts passes learning_rate).
const std::vector<std::string>& keysOf(const std::string& type) {
  static const std::vector<std::string> prodigy = {"betas",       "beta3", "eps",    "weight_decay", "decouple", "use_bias_correction",
                                                   "safeguard_warmup", "d0", "d_coef", "growth_rate",  "fsdp_in_use", "slice_p"};
  static const std::vector<std::string> adam = {"betas", "eps", "weight_decay", "log_every", "decouple", "use_bias_correction",
                                                "d0", "growth_rate", "fsdp_in_use"};
  static const std::vector<std::string> preprint = {"betas", "eps", "weight_decay", "log_every", "decouple", "d0", "growth_rate",
                                                    "fsdp_in_use"};
  static const std::vector<std::string> lion = {"betas", "weight_decay", "log_every", "d0", "fsdp_in_use"};
  if (type == "Prodigy") return prodigy;
  if (type == "DAdaptAdam") return adam;
  if (type == "DAdaptLion") return lion;
  return preprint;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A Python number literal as ast.literal_eval reads it, and as str() shows it: "2" stays an int,
// "2.0" and "1e-6" are floats ("2.0", "1e-06").
struct Number {
  double value = 0;
  bool isInt = false;
  std::string shown;
};

std::optional<Number> readNumber(const std::string& raw) {
  const std::string text = trimAscii(raw);
  if (text.empty()) return std::nullopt;
  size_t digits = (text[0] == '+' || text[0] == '-') ? 1 : 0;
  const bool isInt = digits < text.size() && std::all_of(text.begin() + digits, text.end(), [](char c) { return c >= '0' && c <= '9'; });
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    if (isInt) return Number{v, true, std::to_string(std::stoll(text))};
    return Number{v, false, network::pythonFloatRepr(v)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

bool isDAdaptationType(const std::string& type) {
  const OptimizerRow* row = findOptimizerRow(type);
  return row && row->name == type && row->arguments == OptimizerArguments::DAdaptation;
}

std::optional<std::string> unbuiltDAdaptationType(const std::string& optimizerType) {
  const std::string wanted = lowerAscii(trimAscii(optimizerType));
  for (const char* name : {"DAdaptAdaGrad", "DAdaptAdan", "DAdaptAdanIP", "DAdaptSGD"})
    if (lowerAscii(name) == wanted)
      return "optimizer_type '" + optimizerType + "' (dadaptation's " + name + ") is not built: of the D-Adaptation family this build has " +
             "DAdaptation (DAdaptAdamPreprint, as sd-scripts maps it), DAdaptAdam and DAdaptLion, and Prodigy";
  return std::nullopt;
}

DAdaptationHyperparameters parseDAdaptationArgs(const std::string& type, const std::vector<std::string>& items,
                                                std::string& pythonText) {
  if (!isDAdaptationType(type)) throw std::invalid_argument("optimizer_type '" + type + "' is not of the D-Adaptation family");
  DAdaptationHyperparameters h;
  if (type == "Prodigy") h.decouple = true;
  if (type == "DAdaptLion") h.beta2 = 0.99;
  const std::vector<std::string>& keys = keysOf(type);
  // Each item as ss_optimizer shows it: a kwargs dict keeps a key's first place and its last value.
  std::vector<std::pair<std::string, std::string>> shown;
  auto show = [&](const std::string& key, const std::string& text) {
    for (auto& [k, v] : shown)
      if (k == key) {
        v = text;
        return;
      }
    shown.emplace_back(key, text);
  };
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("optimizer_args: '" + item + "' is not key=value");
    const std::string key = trimAscii(item.substr(0, eq));
    const std::string value = trimAscii(item.substr(eq + 1));
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw std::invalid_argument("optimizer_args: '" + key + "' is not a " + type + " argument (" + type + "'s: " + joined(keys) + ")");
    auto bad = [&](const std::string& why) { return std::invalid_argument("optimizer_args: '" + item + "': " + key + " " + why); };
    auto number = [&]() {
      const std::optional<Number> n = readNumber(value);
      if (!n) throw bad("needs a number, not '" + value + "'");
      show(key, n->shown);
      return *n;
    };
    auto positive = [&]() {
      const Number n = number();
      if (!(n.value > 0)) throw bad("must be greater than 0");
      return n.value;
    };
    auto whole = [&](int64_t least) {
      const Number n = number();
      if (!n.isInt || n.value < static_cast<double>(least)) throw bad("must be a whole number of at least " + std::to_string(least));
      return static_cast<int64_t>(n.value);
    };
    auto flag = [&]() {
      const std::string v = lowerAscii(value);
      if (v != "true" && v != "false") throw bad("must be True or False, not '" + value + "'");
      show(key, v == "true" ? "True" : "False");
      return v == "true";
    };
    if (key == "betas") {
      // "0.9,0.999", "(0.9, 0.999)" or "[0.9, 0.999]": str() shows a tuple, or a list as given.
      std::string text = value;
      const bool list = text.size() >= 2 && text.front() == '[' && text.back() == ']';
      if (list || (text.size() >= 2 && text.front() == '(' && text.back() == ')')) text = text.substr(1, text.size() - 2);
      const size_t comma = text.find(',');
      const std::optional<Number> b1 = comma == std::string::npos ? std::nullopt : readNumber(text.substr(0, comma));
      const std::optional<Number> b2 = comma == std::string::npos ? std::nullopt : readNumber(text.substr(comma + 1));
      if (!b1 || !b2) throw bad("needs two numbers, e.g. betas=0.9,0.999");
      if (b1->value < 0 || b1->value >= 1 || b2->value < 0 || b2->value >= 1) throw bad("must be in [0, 1)");
      h.beta1 = b1->value;
      h.beta2 = b2->value;
      show(key, (list ? "[" : "(") + b1->shown + ", " + b2->shown + (list ? "]" : ")"));
    } else if (key == "beta3") {
      if (value == "None") {
        h.beta3.reset();
        show(key, "None");
      } else {
        const Number n = number();
        if (n.value < 0 || n.value >= 1) throw bad("must be None or in [0, 1)");
        h.beta3 = n.value;
      }
    } else if (key == "eps") {
      h.eps = positive();
    } else if (key == "weight_decay") {
      h.weightDecay = number().value;
    } else if (key == "decouple") {
      h.decouple = flag();
    } else if (key == "use_bias_correction") {
      h.useBiasCorrection = flag();
    } else if (key == "safeguard_warmup") {
      h.safeguardWarmup = flag();
    } else if (key == "d0") {
      h.d0 = positive();
    } else if (key == "d_coef") {
      h.dCoef = positive();
    } else if (key == "growth_rate") {
      h.growthRate = positive();
    } else if (key == "slice_p") {
      h.sliceP = whole(1);
    } else if (key == "log_every") {
      h.logEvery = whole(0);
    } else if (key == "fsdp_in_use") {
      // Sharded parameters' sums all-reduced: this runner does not shard parameters (every rank
      // holds them all, with averaged gradients), so each rank's sums are already the whole.
      if (flag()) throw bad("True is not supported: this runner does not shard parameters (FSDP); leave it False");
    }
  }
  pythonText.clear();
  for (const auto& [k, v] : shown) pythonText += (pythonText.empty() ? "" : ",") + k + "=" + v;
  return h;
}

std::vector<std::string> dadaptationWarnings(const DAdaptationHyperparameters& hyper, const std::vector<OptimizerGroup>& groups) {
  std::vector<std::string> out;
  // sd-scripts looks at the first group's learning rate.
  if (!groups.empty() && groups.front().lr <= 0.1)
    out.push_back("learning rate is too low. If using D-Adaptation or Prodigy, set learning rate around 1.0 (recommended: 1.0): lr=" +
                  network::pythonFloatRepr(groups.front().lr));
  if (hyper.logEvery > 0)
    out.push_back("log_every=" + std::to_string(hyper.logEvery) +
                  ": the D-Adaptation estimate d stays on the device during training and is not printed");
  return out;
}

}  // namespace sinter::train
