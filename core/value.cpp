#include "core/value.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace sinter {

double asDouble(const Value& v, double fallback) {
  if (auto d = std::get_if<double>(&v)) return *d;
  if (auto i = std::get_if<long long>(&v)) return static_cast<double>(*i);
  return fallback;
}

long long asInt(const Value& v, long long fallback) {
  if (auto i = std::get_if<long long>(&v)) return *i;
  if (auto d = std::get_if<double>(&v)) return static_cast<long long>(*d);
  return fallback;
}

bool asBool(const Value& v, bool fallback) {
  if (auto b = std::get_if<bool>(&v)) return *b;
  return fallback;
}

std::string formatDouble(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  // Plain decimal for the usual magnitudes (0.0001 rather than 1e-04), shortest round trip always.
  const double mag = std::fabs(d);
  const bool plain = mag == 0.0 || (mag >= 1e-5 && mag < 1e15);
  auto res = std::to_chars(buf, buf + sizeof buf, d, plain ? std::chars_format::fixed : std::chars_format::scientific);
  std::string s(buf, res.ptr);
  if (!plain) {
    // "1e-07" -> "1e-7": exponent without leading zeros
    auto e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    std::string sign;
    if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) {
      if (exp[0] == '-') sign = "-";
      exp = exp.substr(1);
    }
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    return mant + "e" + sign + exp;
  }
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

std::string asString(const Value& v) {
  if (auto s = std::get_if<std::string>(&v)) return *s;
  if (auto b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (auto i = std::get_if<long long>(&v)) return std::to_string(*i);
  if (auto d = std::get_if<double>(&v)) return formatDouble(*d);
  if (auto l = std::get_if<StringList>(&v)) {
    std::string out;
    for (const auto& item : *l) out += (out.empty() ? "" : " ") + item;
    return out;
  }
  return "";
}

StringList asList(const Value& v) {
  if (auto l = std::get_if<StringList>(&v)) return *l;
  return {};
}

}  // namespace sinter
