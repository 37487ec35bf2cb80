#include "train/optimizer_args.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/ascii_text.h"
#include "network/python_format.h"

namespace sinter::train {

namespace {

double parseNumber(const std::string& item, const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(trimAscii(text), &used);
    if (used != trimAscii(text).size() || !std::isfinite(v)) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("optimizer_args: '" + item + "': '" + text + "' is not a number");
  }
}

// "0.9,0.999", "(0.9, 0.999)" or "[0.9,0.999]": a pair of numbers.
std::pair<double, double> parsePair(const std::string& item, std::string text) {
  text = trimAscii(text);
  if (text.size() >= 2 && ((text.front() == '(' && text.back() == ')') || (text.front() == '[' && text.back() == ']')))
    text = text.substr(1, text.size() - 2);
  const size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
    throw std::invalid_argument("optimizer_args: '" + item + "': betas needs two numbers, e.g. betas=0.9,0.999");
  return {parseNumber(item, text.substr(0, comma)), parseNumber(item, text.substr(comma + 1))};
}

}  // namespace

const std::vector<std::string>& availableOptimizerTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t = {"AdamW", "Adafactor"};
    t.insert(t.end(), dadaptationTypes().begin(), dadaptationTypes().end());
    return t;
  }();
  return types;
}

std::string resolveOptimizerType(const std::string& optimizerType) {
  const std::string wanted = lowerAscii(trimAscii(optimizerType));
  if (wanted.empty()) return "AdamW";
  if (const auto refusal = unbuiltDAdaptationType(optimizerType)) throw std::invalid_argument(*refusal);
  for (const std::string& t : availableOptimizerTypes())
    if (lowerAscii(t) == wanted) return t;
  std::string list;
  for (const std::string& t : availableOptimizerTypes()) list += (list.empty() ? "" : ", ") + t;
  throw std::invalid_argument("optimizer_type '" + optimizerType + "' is not available in this build (available: " +
                              list + ")");
}

std::string OptimizerSettings::className() const {
  if (isDAdaptationType(type)) return dadaptationClassName(type);
  return type == "Adafactor" ? "transformers.optimization.Adafactor" : "torch.optim.adamw.AdamW";
}

OptimizerSettings parseOptimizerSettings(const std::string& optimizerType, const std::vector<std::string>& rawItems) {
  OptimizerSettings out;
  out.type = resolveOptimizerType(optimizerType);
  std::vector<std::string> items;
  for (const std::string& raw : rawItems) {
    std::istringstream words(raw);
    std::string w;
    while (words >> w) {
      // "betas=(0.9, 0.999)" split on its space: glue the pieces back.
      if (!items.empty() && w.find('=') == std::string::npos) items.back() += w;
      else items.push_back(w);
    }
  }
  if (isDAdaptationType(out.type)) {
    out.dadaptation = parseDAdaptationArgs(out.type, items, out.pythonText);
    return out;
  }
  // Each item as ss_optimizer shows it, in the order given (as sd-scripts' kwargs dict keeps it).
  std::vector<std::pair<std::string, std::string>> shown;
  auto show = [&](const std::string& key, const std::string& text) {
    for (auto& [k, v] : shown)
      if (k == key) {
        v = text;
        return;
      }
    shown.emplace_back(key, text);
  };
  auto boolean = [](const std::string& item, const std::string& value) {
    const std::string v = lowerAscii(trimAscii(value));
    if (v == "true") return true;
    if (v == "false") return false;
    throw std::invalid_argument("optimizer_args: '" + item + "': '" + value + "' is not True or False");
  };
  const bool adafactor = out.type == "Adafactor";
  AdafactorHyperparameters& af = out.adafactor;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("optimizer_args: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    auto number = [&](double& dst) {
      dst = parseNumber(item, value);
      show(key, network::pythonFloatRepr(dst));
    };
    auto flag = [&](bool& dst) {
      dst = boolean(item, value);
      show(key, dst ? "True" : "False");
    };
    if (key == "weight_decay") {
      number(adafactor ? af.weightDecay : out.adamw.weightDecay);
    } else if (!adafactor && key == "eps") {
      number(out.adamw.eps);
    } else if (!adafactor && key == "betas") {
      const auto [b1, b2] = parsePair(item, value);
      if (b1 < 0 || b1 >= 1 || b2 < 0 || b2 >= 1)
        throw std::invalid_argument("optimizer_args: '" + item + "': betas must be in [0, 1)");
      out.adamw.beta1 = b1;
      out.adamw.beta2 = b2;
      show(key, "(" + network::pythonFloatRepr(b1) + ", " + network::pythonFloatRepr(b2) + ")");
    } else if (adafactor && key == "eps") {
      const auto [e1, e2] = parsePair(item, value);
      af.eps1 = e1, af.eps2 = e2;
      show(key, "(" + network::pythonFloatRepr(e1) + ", " + network::pythonFloatRepr(e2) + ")");
    } else if (adafactor && key == "clip_threshold") {
      number(af.clipThreshold);
    } else if (adafactor && key == "decay_rate") {
      number(af.decayRate);
    } else if (adafactor && key == "beta1") {
      if (lowerAscii(trimAscii(value)) == "none") {
        af.beta1.reset();
        show(key, "None");
      } else {
        double b1 = 0;
        number(b1);
        if (b1 < 0 || b1 >= 1) throw std::invalid_argument("optimizer_args: '" + item + "': beta1 must be in [0, 1)");
        af.beta1 = b1;
      }
    } else if (adafactor && key == "scale_parameter") {
      flag(af.scaleParameter);
    } else if (adafactor && key == "relative_step") {
      flag(af.relativeStep);
    } else if (adafactor && key == "warmup_init") {
      flag(af.warmupInit);
    } else {
      throw std::invalid_argument("optimizer_args: '" + key + "' is not an " + out.type + " argument this build has (supported: " +
                                  (adafactor ? "scale_parameter, relative_step, warmup_init, beta1, decay_rate, clip_threshold, "
                                               "eps, weight_decay"
                                             : "weight_decay, betas, eps") +
                                  ")");
    }
  }
  if (adafactor) {
    // sd-scripts: relative_step defaults to True, and warmup_init needs it.
    if (!std::count_if(shown.begin(), shown.end(), [](const auto& kv) { return kv.first == "relative_step"; })) {
      af.relativeStep = true;
      show("relative_step", "True");
    }
    if (af.warmupInit && !af.relativeStep) {
      af.relativeStep = true;
      show("relative_step", "True");
    }
  }
  for (const auto& [k, v] : shown) out.pythonText += (out.pythonText.empty() ? "" : ",") + k + "=" + v;
  return out;
}

}  // namespace sinter::train
