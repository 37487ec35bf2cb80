#pragma once
// lr_scheduler_args as sd-scripts reads them (train_util.get_scheduler_fix): "key=value" items,
// each value a Python literal (ast.literal_eval), passed as keyword arguments to the schedule.
// Numbers, True/False/None, quoted strings and lists/tuples of numbers are what schedules take.
#include <optional>
#include <string>
#include <vector>

namespace sinter::train {

struct SchedulerArg {
  enum class Kind { Int, Float, Bool, None, String, List };
  std::string key, value;  // as given
  Kind kind = Kind::None;
  double number = 0;           // Int, Float, Bool (0/1)
  std::string text;            // String
  std::vector<double> list;    // List
  bool listOfInts = false;
};

// The items in the order given (a repeated key keeps its last value, as a Python dict does). Items
// may also come as one space-separated string. A value that is not such a literal is
// std::invalid_argument naming the item.
std::vector<SchedulerArg> parseLrSchedulerArgs(const std::vector<std::string>& items);

// Typed reads of the arguments a schedule takes; `owner` names the schedule in messages.
class SchedulerArgs {
 public:
  SchedulerArgs(std::vector<SchedulerArg> args, std::string owner) : args_(std::move(args)), owner_(std::move(owner)) {}
  // Refuses an argument not in `known`, listing them (last_epoch with the reason it is not taken).
  void requireKnown(const std::vector<std::string>& known) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  std::optional<double> number(const std::string& key) const;
  std::optional<long long> integer(const std::string& key) const;  // a whole number
  std::optional<bool> boolean(const std::string& key) const;
  std::optional<std::string> string(const std::string& key) const;
  std::optional<std::vector<double>> numbers(const std::string& key) const;  // a list or tuple
  // std::invalid_argument "lr_scheduler_args: 'key=value': <why>".
  [[noreturn]] void fail(const std::string& key, const std::string& why) const;
  const std::string& owner() const { return owner_; }
  const SchedulerArg* find(const std::string& key) const;  // null when not given

 private:
  std::vector<SchedulerArg> args_;
  std::string owner_;
};

}  // namespace sinter::train
