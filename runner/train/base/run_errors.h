#pragma once
// A problem with the run's inputs found before the first step: the runner exits 2. And the text a
// user sees of any error: the project's message, never libtorch's C++ backtrace.
#include <exception>
#include <stdexcept>
#include <string>

namespace sinter::train {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `e`'s message without the C++ backtrace that libtorch's c10::Error carries ("Exception raised
// from ... frame #0: ..."), also where another message quotes one: for the log and the error event.
std::string userMessage(const std::exception& e);
std::string withoutBacktrace(const std::string& message);

}  // namespace sinter::train
