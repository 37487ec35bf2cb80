#include "train/optim/lr_scheduler_args.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/ascii_text.h"

namespace sinter::train {

namespace {

// A Python int or float literal ("100", "-3", "1e-6", "0.5", "1_000"); nullopt otherwise.
std::optional<std::pair<double, bool>> readNumber(std::string text) {
  text = trimAscii(text);
  std::string digits;
  for (char c : text)
    if (c != '_') digits += c;
  if (digits.empty()) return std::nullopt;
  const size_t sign = (digits[0] == '+' || digits[0] == '-') ? 1 : 0;
  bool isInt = sign < digits.size();
  for (size_t i = sign; i < digits.size(); ++i) isInt &= digits[i] >= '0' && digits[i] <= '9';
  try {
    size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used != digits.size() || !std::isfinite(v)) return std::nullopt;
    return std::make_pair(v, isInt);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

SchedulerArg readLiteral(const std::string& item, const std::string& key, const std::string& raw) {
  SchedulerArg a;
  a.key = key;
  a.value = raw;
  const std::string v = trimAscii(raw);
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("lr_scheduler_args: '" + item + "': " + why);
  };
  if (v == "True" || v == "False") {
    a.kind = SchedulerArg::Kind::Bool;
    a.number = v == "True" ? 1 : 0;
  } else if (v == "None") {
    a.kind = SchedulerArg::Kind::None;
  } else if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    a.kind = SchedulerArg::Kind::String;
    a.text = v.substr(1, v.size() - 2);
    if (a.text.find(v.front()) != std::string::npos) throw bad("the string is not one Python literal");
  } else if (v.size() >= 2 && ((v.front() == '[' && v.back() == ']') || (v.front() == '(' && v.back() == ')'))) {
    a.kind = SchedulerArg::Kind::List;
    a.listOfInts = true;
    std::stringstream inner(v.substr(1, v.size() - 2));
    std::vector<std::string> parts;
    for (std::string part; std::getline(inner, part, ',');) parts.push_back(part);
    if (!parts.empty() && trimAscii(parts.back()).empty()) parts.pop_back();  // "(1,)" and "[1, 2,]"
    for (const std::string& part : parts) {
      const auto n = readNumber(part);
      if (!n) throw bad("'" + trimAscii(part) + "' in " + v + " is not a number");
      a.list.push_back(n->first);
      a.listOfInts &= n->second;
    }
  } else if (const auto n = readNumber(v)) {
    a.kind = n->second ? SchedulerArg::Kind::Int : SchedulerArg::Kind::Float;
    a.number = n->first;
  } else {
    // ast.literal_eval refuses a bare word: sd-scripts fails on it too.
    throw bad("'" + v + "' is not a Python literal (a number, True, False, None, a quoted string or a list of numbers; "
              "strings need quotes, e.g. anneal_strategy='linear')");
  }
  return a;
}

std::string kindName(const SchedulerArg& a) {
  switch (a.kind) {
    case SchedulerArg::Kind::Int: return "an int";
    case SchedulerArg::Kind::Float: return "a float";
    case SchedulerArg::Kind::Bool: return "a bool";
    case SchedulerArg::Kind::None: return "None";
    case SchedulerArg::Kind::String: return "a string";
    case SchedulerArg::Kind::List: return "a list";
  }
  return "a value";
}

}  // namespace

std::vector<SchedulerArg> parseLrSchedulerArgs(const std::vector<std::string>& rawItems) {
  std::vector<std::string> items;
  for (const std::string& raw : rawItems) {
    std::istringstream words(raw);
    std::string w;
    while (words >> w) {
      // "milestones=[100, 200]" split on its space: glue the pieces back.
      if (!items.empty() && w.find('=') == std::string::npos) items.back() += " " + w;
      else items.push_back(w);
    }
  }
  std::vector<SchedulerArg> out;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    // sd-scripts: key, value = arg.split("=")
    if (eq == std::string::npos || eq == 0 || item.find('=', eq + 1) != std::string::npos)
      throw std::invalid_argument("lr_scheduler_args: '" + item + "' is not key=value");
    SchedulerArg a = readLiteral(item, item.substr(0, eq), item.substr(eq + 1));
    bool replaced = false;
    for (SchedulerArg& b : out)
      if (b.key == a.key) b = a, replaced = true;
    if (!replaced) out.push_back(std::move(a));
  }
  return out;
}

const SchedulerArg* SchedulerArgs::find(const std::string& key) const {
  for (const SchedulerArg& a : args_)
    if (a.key == key) return &a;
  return nullptr;
}

void SchedulerArgs::fail(const std::string& key, const std::string& why) const {
  const SchedulerArg* a = find(key);
  throw std::invalid_argument("lr_scheduler_args: '" + key + "=" + (a ? a->value : std::string()) + "': " + why);
}

void SchedulerArgs::requireKnown(const std::vector<std::string>& known) const {
  for (const SchedulerArg& a : args_) {
    bool ok = false;
    for (const std::string& k : known) ok |= k == a.key;
    if (ok) continue;
    if (a.key == "last_epoch")
      fail(a.key, "last_epoch is not supported: a resumed run (resume) continues the schedule from its state");
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument("lr_scheduler_args: '" + a.key + "' is not an argument of " + owner_ +
                                (list.empty() ? " (it takes none here)" : " (it takes: " + list + ")"));
  }
}

std::optional<double> SchedulerArgs::number(const std::string& key) const {
  const SchedulerArg* a = find(key);
  if (!a) return std::nullopt;
  if (a->kind != SchedulerArg::Kind::Int && a->kind != SchedulerArg::Kind::Float)
    fail(key, key + " of " + owner_ + " is a number, not " + kindName(*a));
  return a->number;
}

std::optional<long long> SchedulerArgs::integer(const std::string& key) const {
  const SchedulerArg* a = find(key);
  if (!a) return std::nullopt;
  if (a->kind != SchedulerArg::Kind::Int) fail(key, key + " of " + owner_ + " is an int, not " + kindName(*a));
  if (std::abs(a->number) > 9e15) fail(key, key + " is out of range");
  return static_cast<long long>(a->number);
}

std::optional<bool> SchedulerArgs::boolean(const std::string& key) const {
  const SchedulerArg* a = find(key);
  if (!a) return std::nullopt;
  if (a->kind != SchedulerArg::Kind::Bool) fail(key, key + " of " + owner_ + " is True or False, not " + kindName(*a));
  return a->number != 0;
}

std::optional<std::string> SchedulerArgs::string(const std::string& key) const {
  const SchedulerArg* a = find(key);
  if (!a) return std::nullopt;
  if (a->kind != SchedulerArg::Kind::String) fail(key, key + " of " + owner_ + " is a quoted string, not " + kindName(*a));
  return a->text;
}

std::optional<std::vector<double>> SchedulerArgs::numbers(const std::string& key) const {
  const SchedulerArg* a = find(key);
  if (!a) return std::nullopt;
  if (a->kind != SchedulerArg::Kind::List) fail(key, key + " of " + owner_ + " is a list of numbers, e.g. [100, 200], not " + kindName(*a));
  return a->list;
}

}  // namespace sinter::train
