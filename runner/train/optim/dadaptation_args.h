#pragma once
// optimizer_args of Prodigy and the D-Adaptation family as sd-scripts passes them to
// prodigyopt.Prodigy, dadaptation.DAdaptAdam, dadaptation.experimental.DAdaptAdamPreprint (sd-scripts'
// "DAdaptation") and dadaptation.DAdaptLion: each one's keys and defaults, checked as those
// constructors check them.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace sinter::train {

struct OptimizerGroup;

struct DAdaptationHyperparameters {
  double beta1 = 0.9;
  double beta2 = 0.999;          // DAdaptLion: 0.99
  std::optional<double> beta3;   // Prodigy: sqrt(beta2) when None
  double eps = 1e-8;             // not DAdaptLion
  double weightDecay = 0.0;
  bool decouple = false;         // Prodigy: true; DAdaptLion always decouples
  bool useBiasCorrection = false;  // Prodigy, DAdaptAdam
  bool safeguardWarmup = false;    // Prodigy
  double d0 = 1e-6;
  double dCoef = 1.0;            // Prodigy
  double growthRate = std::numeric_limits<double>::infinity();  // not DAdaptLion
  int64_t sliceP = 1;            // Prodigy: the estimate from every slice_p-th entry
  int64_t logEvery = 0;          // DAdapt*: a print every log_every steps (the estimate stays on the device here)
};

// Prodigy, DAdaptation, DAdaptAdam, DAdaptAdamPreprint or DAdaptLion (canonical spelling): the
// optimizer table's rows with D-Adaptation's arguments.
bool isDAdaptationType(const std::string& type);
// The refusal for a member of the family that sd-scripts names and this build lacks (DAdaptSGD, ...),
// matched case-insensitively; nullopt for any other name.
std::optional<std::string> unbuiltDAdaptationType(const std::string& optimizerType);
// Parses the key=value items for `type`; `pythonText` gets them as ss_optimizer shows them (as given,
// Python's spelling). A key the class lacks or a bad value is std::invalid_argument naming the key.
DAdaptationHyperparameters parseDAdaptationArgs(const std::string& type, const std::vector<std::string>& items,
                                                std::string& pythonText);
// What sd-scripts warns about before it builds one of them: a learning rate far from 1.0 (these
// optimizers adapt the step themselves; lr only scales it), and what this build does not print.
std::vector<std::string> dadaptationWarnings(const DAdaptationHyperparameters& hyper, const std::vector<OptimizerGroup>& groups);

}  // namespace sinter::train
