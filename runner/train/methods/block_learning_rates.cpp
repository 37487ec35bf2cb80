#include "train/methods/block_learning_rates.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/ascii_text.h"

namespace sinter::train {

std::vector<double> parseBlockLearningRates(const std::string& text, size_t count) {
  std::vector<double> rates;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const std::string v = trimAscii(item);
    double rate = 0;
    try {
      size_t used = 0;
      rate = std::stod(v, &used);
      if (used != v.size()) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      throw std::invalid_argument("block_lr: '" + v + "' (value " + std::to_string(rates.size() + 1) + ") is not a number");
    }
    if (!std::isfinite(rate) || rate < 0)
      throw std::invalid_argument("block_lr: value " + std::to_string(rates.size() + 1) + " (" + v + ") must be a learning rate of at least 0");
    rates.push_back(rate);
  }
  if (!text.empty() && text.back() == ',') rates.push_back(-1);  // "a,b," has an empty last value, which float() refuses
  if (!rates.empty() && rates.back() < 0) throw std::invalid_argument("block_lr: the last value is empty");
  if (rates.size() != count)
    throw std::invalid_argument("block_lr must have " + std::to_string(count) + " values (it has " + std::to_string(rates.size()) + ")");
  return rates;
}

}  // namespace sinter::train
