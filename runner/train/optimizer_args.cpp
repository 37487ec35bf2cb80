#include "train/optimizer_args.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "network/python_format.h"

namespace sinter::train {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

double parseNumber(const std::string& item, const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(trim(text), &used);
    if (used != trim(text).size() || !std::isfinite(v)) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("optimizer_args: '" + item + "': '" + text + "' is not a number");
  }
}

// "0.9,0.999", "(0.9, 0.999)" or "[0.9,0.999]": a pair of numbers.
std::pair<double, double> parsePair(const std::string& item, std::string text) {
  text = trim(text);
  if (text.size() >= 2 && ((text.front() == '(' && text.back() == ')') || (text.front() == '[' && text.back() == ']')))
    text = text.substr(1, text.size() - 2);
  const size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
    throw std::invalid_argument("optimizer_args: '" + item + "': betas needs two numbers, e.g. betas=0.9,0.999");
  return {parseNumber(item, text.substr(0, comma)), parseNumber(item, text.substr(comma + 1))};
}

}  // namespace

const std::vector<std::string>& availableOptimizerTypes() {
  static const std::vector<std::string> types = {"AdamW"};
  return types;
}

std::string resolveOptimizerType(const std::string& optimizerType) {
  const std::string wanted = lower(trim(optimizerType));
  if (wanted.empty()) return "AdamW";
  for (const std::string& t : availableOptimizerTypes())
    if (lower(t) == wanted) return t;
  std::string list;
  for (const std::string& t : availableOptimizerTypes()) list += (list.empty() ? "" : ", ") + t;
  throw std::invalid_argument("optimizer_type '" + optimizerType + "' is not available in this build (available: " +
                              list + ")");
}

ParsedOptimizerArgs parseAdamWArgs(const std::vector<std::string>& rawItems) {
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
  ParsedOptimizerArgs out;
  std::vector<std::string> shown;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("optimizer_args: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (key == "weight_decay") {
      out.hyper.weightDecay = parseNumber(item, value);
      shown.push_back(key + "=" + network::pythonFloatRepr(out.hyper.weightDecay));
    } else if (key == "eps") {
      out.hyper.eps = parseNumber(item, value);
      shown.push_back(key + "=" + network::pythonFloatRepr(out.hyper.eps));
    } else if (key == "betas") {
      const auto [b1, b2] = parsePair(item, value);
      if (b1 < 0 || b1 >= 1 || b2 < 0 || b2 >= 1)
        throw std::invalid_argument("optimizer_args: '" + item + "': betas must be in [0, 1)");
      out.hyper.beta1 = b1;
      out.hyper.beta2 = b2;
      shown.push_back("betas=(" + network::pythonFloatRepr(b1) + ", " + network::pythonFloatRepr(b2) + ")");
    } else {
      throw std::invalid_argument("optimizer_args: '" + key + "' is not an AdamW argument this build has (supported: "
                                  "weight_decay, betas, eps)");
    }
  }
  for (const std::string& s : shown) out.pythonText += (out.pythonText.empty() ? "" : ",") + s;
  return out;
}

}  // namespace sinter::train
