#include "train/optim/optimizer_args.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/ascii_text.h"
#include "core/optimizer_table.h"
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

std::string resolveOptimizerType(const std::string& optimizerType) {
  const std::string wanted = lowerAscii(trimAscii(optimizerType));
  if (wanted.empty()) return "AdamW";
  if (const auto refusal = unbuiltDAdaptationType(optimizerType)) throw std::invalid_argument(*refusal);
  if (const OptimizerRow* row = findOptimizerRow(optimizerType)) return row->name;
  std::string list;
  for (const std::string& t : optimizerNames()) list += (list.empty() ? "" : ", ") + t;
  throw std::invalid_argument("optimizer_type '" + optimizerType + "' is not available in this build (available: " +
                              list + ")");
}

const OptimizerRow& OptimizerSettings::row() const {
  const OptimizerRow* r = findOptimizerRow(type);
  if (!r) throw std::logic_error("optimizer type '" + type + "' has no row in core/optimizer_table.cpp");
  return *r;
}

std::string OptimizerSettings::className() const { return row().className; }

std::optional<long long> OptimizerSettings::eightBitFrom() const {
  return row().eightBit ? std::optional<long long>(min8bitSize) : std::nullopt;
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
  const OptimizerArguments arguments = out.row().arguments;
  if (arguments == OptimizerArguments::DAdaptation) {
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
  const bool adafactor = arguments == OptimizerArguments::Adafactor;
  AdafactorHyperparameters& af = out.adafactor;
  const bool lion = arguments == OptimizerArguments::Lion;
  const bool sgd = arguments == OptimizerArguments::Sgd;
  const bool adamw = !adafactor && !lion && !sgd;  // torch's AdamW or bitsandbytes' AdamW family
  const bool bitsandbytes = out.className().rfind("bitsandbytes.", 0) == 0;
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
      double& weightDecay = adafactor ? af.weightDecay : lion ? out.lion.weightDecay : sgd ? out.sgd.weightDecay : out.adamw.weightDecay;
      number(weightDecay);
      if (!adafactor && weightDecay < 0)
        throw std::invalid_argument("optimizer_args: '" + item + "': weight_decay must not be negative");
    } else if (adamw && key == "eps") {
      number(out.adamw.eps);
      if (out.adamw.eps < 0) throw std::invalid_argument("optimizer_args: '" + item + "': eps must not be negative");
    } else if ((adamw || lion) && key == "betas") {
      const auto [b1, b2] = parsePair(item, value);
      // lion_pytorch allows a beta of 1; torch and bitsandbytes want each below 1.
      const bool oneAllowed = out.type == "Lion";
      if (b1 < 0 || b2 < 0 || (oneAllowed ? (b1 > 1 || b2 > 1) : (b1 >= 1 || b2 >= 1)))
        throw std::invalid_argument("optimizer_args: '" + item + "': betas must be in [0, 1" + (out.type == "Lion" ? "]" : ")"));
      (lion ? out.lion.beta1 : out.adamw.beta1) = b1;
      (lion ? out.lion.beta2 : out.adamw.beta2) = b2;
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
    } else if (bitsandbytes && key == "min_8bit_size") {
      const double n = parseNumber(item, value);
      if (n != std::floor(n) || std::abs(n) > 1e18)
        throw std::invalid_argument("optimizer_args: '" + item + "': min_8bit_size must be a whole number");
      out.min8bitSize = static_cast<long long>(n);
      show(key, std::to_string(out.min8bitSize));
    } else if (bitsandbytes && adamw && key == "amsgrad") {
      bool amsgrad = false;
      flag(amsgrad);
      if (amsgrad) throw std::invalid_argument("optimizer_args: '" + item + "': bitsandbytes' " + out.type + " has no amsgrad");
    } else if (out.type == "Lion" && key == "use_triton") {
      bool triton = false;
      flag(triton);  // lion_pytorch's Triton kernel computes the same update
    } else if (out.type == "Lion" && key == "decoupled_weight_decay") {
      bool decoupled = false;
      flag(decoupled);
      if (decoupled)
        throw std::invalid_argument("optimizer_args: '" + item + "' is not supported by this build (lion_pytorch divides "
                                    "weight_decay by the initial learning rate: give weight_decay already divided)");
    } else if (sgd && key == "momentum") {
      number(out.sgd.momentum);
      // torch: "Nesterov momentum requires a momentum"; bitsandbytes: "SGD without momentum is not supported!"
      if (out.sgd.momentum <= 0) throw std::invalid_argument("optimizer_args: '" + item + "': " + out.type + " needs a momentum above 0");
    } else if (sgd && key == "dampening") {
      double dampening = 0;
      number(dampening);
      // torch's Nesterov SGD refuses a dampening; bitsandbytes' SGD8bit takes it and never reads it.
      if (out.type == "SGDNesterov" && dampening != 0)
        throw std::invalid_argument("optimizer_args: '" + item + "': Nesterov momentum requires zero dampening");
    } else if (sgd && key == "nesterov") {
      throw std::invalid_argument("optimizer_args: '" + item + "': sd-scripts passes nesterov=True to " + out.type +
                                  " itself (a second one is Python's \"multiple values for keyword argument\")");
    } else {
      throw std::invalid_argument("optimizer_args: '" + key + "' is not an " + out.type + " argument this build has (supported: " +
                                  out.row().argumentKeys + ")");
    }
  }
  // sd-scripts: "SGD with Nesterov must be with momentum, set momentum to 0.9", added last.
  if (sgd && !std::count_if(shown.begin(), shown.end(), [](const auto& kv) { return kv.first == "momentum"; }))
    show("momentum", network::pythonFloatRepr(out.sgd.momentum));
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
