#pragma once
// A problem with the run's inputs found before the first step: the runner exits 2.
#include <stdexcept>

namespace sinter::train {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sinter::train
