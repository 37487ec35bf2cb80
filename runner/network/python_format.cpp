#include "network/python_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>

namespace sinter::network {

std::string pythonFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-tripping digits, as Python's repr.
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  // buf is "-d.ddde[+-]XX": split digits and exponent.
  std::string text(buf);
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const size_t ePos = text.find('e');
  const int exponent = std::atoi(text.c_str() + ePos + 1);
  std::string digits = text.substr(0, ePos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();

  std::string out;
  if (exponent < -4 || exponent >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp;
  } else if (exponent < 0) {
    out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else {
    const size_t intDigits = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= intDigits) {
      out = digits + std::string(intDigits - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, intDigits) + "." + digits.substr(intDigits);
    }
  }
  return negative ? "-" + out : out;
}

std::string pythonStr(const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::null: return "None";
    case nlohmann::ordered_json::value_t::boolean: return value.get<bool>() ? "True" : "False";
    case nlohmann::ordered_json::value_t::number_integer: return std::to_string(value.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: return std::to_string(value.get<uint64_t>());
    case nlohmann::ordered_json::value_t::number_float: return pythonFloatRepr(value.get<double>());
    case nlohmann::ordered_json::value_t::string: return value.get<std::string>();
    case nlohmann::ordered_json::value_t::array: {
      std::string out = "[";
      bool first = true;
      for (const auto& item : value) {
        out += first ? "" : ", ";
        first = false;
        out += item.is_string() ? "'" + item.get<std::string>() + "'" : pythonStr(item);
      }
      return out + "]";
    }
    default: return pythonJsonDumps(value);
  }
}

namespace {

void appendCodeUnit(std::string& out, unsigned unit) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", unit);
  out += buf;
}

std::string quoteAscii(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20) appendCodeUnit(out, c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // Decode UTF-8; invalid bytes come out as U+FFFD.
    unsigned cp = 0xFFFD;
    size_t len = 1;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    if (len > 1 && i + len <= s.size()) {
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    } else {
      len = 1, cp = 0xFFFD;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      appendCodeUnit(out, 0xD800 + (cp >> 10));
      appendCodeUnit(out, 0xDC00 + (cp & 0x3FF));
    } else {
      appendCodeUnit(out, cp);
    }
    i += len;
  }
  return out + "\"";
}

}  // namespace

std::string pythonJsonDumps(const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::null: return "null";
    case nlohmann::ordered_json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case nlohmann::ordered_json::value_t::number_float: {
      const double v = value.get<double>();
      if (std::isnan(v)) return "NaN";
      if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
      return pythonFloatRepr(v);
    }
    case nlohmann::ordered_json::value_t::string: return quoteAscii(value.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::string out = "[";
      bool first = true;
      for (const auto& item : value) {
        out += first ? "" : ", ";
        first = false;
        out += pythonJsonDumps(item);
      }
      return out + "]";
    }
    case nlohmann::ordered_json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& item : value.items()) {
        out += first ? "" : ", ";
        first = false;
        out += quoteAscii(item.key()) + ": " + pythonJsonDumps(item.value());
      }
      return out + "}";
    }
    default: return value.dump();
  }
}

}  // namespace sinter::network
