#include "train/loop/step_reports.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "train/base/device_info.h"
#include "train/loop/vram_budget_plan.h"

namespace sinter::train {

StepReports::StepReports(const RunContext& run, Optimizer& optimizer, const LrSchedule& schedule, TrainingLog& log,
                         ProgressMeter& meter, std::vector<std::string> figureNames, long long maxTrainSteps, long long startStep,
                         bool firstStepIsWarmup)
    : run_(run), optimizer_(optimizer), schedule_(schedule), log_(log), meter_(meter), figureNames_(std::move(figureNames)),
      maxTrainSteps_(maxTrainSteps), startStep_(startStep), firstStepIsWarmup_(firstStepIsWarmup),
      progressLine_(::isatty(2) && !run.events.jsonl()) {
  if (log.active()) stepSizeEstimate_ = optimizer.globalState("d");
  if (run.device.is_cuda() && run.rank() == 0 && run.config.family()) vramBudget_ = vramBudgetCheck(run.config, *run.config.family());
  if (vramBudget_) {
    reportStartPeak(*vramBudget_, deviceMemoryPeakBytes(run.device), run.events);
    resetPeakMemory(run.device);
  }
}

void StepReports::push(long long step, long long scheduleStep, const torch::Tensor& loss, const torch::Tensor& figures,
                       const StepFacts& facts) {
  losses_.push(step, loss, figures);
  Pending& pending = unreported_[step];
  pending.facts = facts;
  // Step 1's own peak, read now: when its report comes the next step is under way (which may join
  // its micro-batches into one larger pass, step_runner.h).
  if (vramBudget_ && step == startStep_ + 1) firstStepPeakBytes_ = deviceMemoryPeakBytes(run_.device);
  if (!log_.active()) return;
  // sd-scripts logs lr_scheduler.get_last_lr(): the rate after this step's scheduler step.
  const std::optional<double> own = optimizer_.ownLearningRate(scheduleStep);
  for (size_t g = 0; g < optimizer_.groupCount(); ++g)
    pending.loggedLrs.push_back(own.value_or(schedule_.learningRate(optimizer_.group(g).lr, scheduleStep)));
  if (stepSizeEstimate_) stepSizes_.push(step, stepSizeEstimate_->detach().clone());
}

void StepReports::report(bool includeNewest, WarmupClock& clock) {
  std::map<long long, double> stepSizes;
  if (stepSizeEstimate_)
    for (const auto& [step, d] : stepSizes_.take(includeNewest)) stepSizes[step] = d;
  for (const LossReadback::Reading& reading : losses_.takeReadings(includeNewest)) {
    const long long step = reading.step;
    const double loss = reading.loss;
    const Pending p = unreported_.at(step);
    unreported_.erase(step);
    if (!std::isfinite(loss)) throw std::runtime_error("the loss is " + std::to_string(loss) + " at step " + std::to_string(step));
    const bool warmup = step == startStep_ + 1 && firstStepIsWarmup_;
    if (warmup) clock.add("first step, " + p.facts.signature, p.facts.seconds);
    meter_.record(loss, warmup ? std::nullopt : std::optional<double>(p.facts.seconds));
    events::Step s;
    s.step = step, s.total = maxTrainSteps_, s.epoch = p.facts.epoch + 1, s.loss = loss, s.avg_loss = meter_.averageLoss();
    s.lr = p.facts.lr, s.it_per_s = meter_.itPerSecond(), s.eta_s = meter_.etaSeconds(step), s.step_ms = p.facts.seconds * 1000.0;
    s.peak_mem_mb = peakMemoryMb(run_.device);
    if (vramBudget_ && step == startStep_ + 1) reportVramPeak(*vramBudget_, firstStepPeakBytes_, run_.events);
    for (size_t i = 0; i < figureNames_.size() && i < reading.figures.size(); ++i) s.figures.emplace_back(figureNames_[i], reading.figures[i]);
    run_.events.emit(s);
    if (log_.active()) {
      std::vector<GroupRate> rates;
      for (size_t g = 0; g < p.loggedLrs.size(); ++g) {
        GroupRate r{optimizer_.group(g).label, p.loggedLrs[g], std::nullopt};
        if (auto d = stepSizes.find(step); d != stepSizes.end()) r.d = d->second;
        rates.push_back(r);
      }
      log_.step(step, loss, meter_.averageLoss(), rates, s.figures);
    }
    std::string line = meter_.line(step);
    for (const auto& [name, value] : s.figures) line += fmt::format(", {} {:.4g}", name, value);
    if (progressLine_) std::fprintf(stderr, "\r%s", line.c_str());
    else if (step % 10 == 0 || step == maxTrainSteps_) spdlog::info("{}", line);
  }
}

void StepReports::endLine() const {
  if (progressLine_) std::fprintf(stderr, "\n");
}

}  // namespace sinter::train
