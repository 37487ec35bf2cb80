#pragma once
// The optimizers Sinter trains with, one row each: every fact about an optimizer apart from its
// arithmetic. The registry's choices for optimizer_type, the memory plan, the runner's name
// resolution, its optimizer_args parsing, logs and metadata, and fused_backward_pass read it. The
// runner builds each row's class from its name (runner/train/optim/make_optimizer.cpp; a test
// checks that it builds every row). Adding an optimizer: its row here, its factory line there, and
// its class.
#include <string>
#include <vector>

namespace sinter {

// Which hyperparameters optimizer_args sets (runner/train/optim/optimizer_args.h).
enum class OptimizerArguments { AdamW, Adafactor, Lion, Sgd, DAdaptation };

struct OptimizerRow {
  const char* name;       // optimizer_type as sd-scripts spells it (matched case-insensitively)
  const char* className;  // optimizer_class.__module__ + "." + __name__: sd-scripts' log and ss_optimizer
  bool eightBit;          // bitsandbytes' 8-bit states (32-bit under min_8bit_size elements)
  double stateBytesPerParameter;  // optimizer state per trained parameter, for the memory plan
  // Steps each parameter on its own (fused_backward_pass, fused_optimizer_groups may step it inside
  // the backward pass); false for those that estimate their step size across all parameters.
  bool perParameter;
  OptimizerArguments arguments;
  const char* argumentKeys;  // the optimizer_args keys it takes, for the refusal of another ("": its parser lists them)
};

// In the app's order: the common choices first.
const std::vector<OptimizerRow>& optimizerTable();
// The row of `name` (case-insensitive, surrounding blanks ignored); null when none.
const OptimizerRow* findOptimizerRow(const std::string& name);
// The names, in the table's order.
std::vector<std::string> optimizerNames();

}  // namespace sinter
