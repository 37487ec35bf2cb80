#pragma once
// TensorBoard's Event protocol buffer (tensorboard/compat/proto/event.proto, summary.proto,
// tensor.proto), encoded by hand: the few messages a training log writes, in protobuf's wire
// format, so no protobuf library is needed. Each function returns one serialized Event, the
// payload of one record of an event file (tfevents_writer.h).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace sinter::io::tensorboard {

// The version the first event of a file names; TensorBoard reads files that start with it.
inline constexpr const char* kFileVersion = "brain.Event:2";

struct Scalar {
  std::string tag;  // "loss/current"
  float value = 0;  // Summary.Value.simple_value is a float
};

// Event{wall_time, step, file_version}.
std::string fileVersionEvent(double wallTime, std::int64_t step);
// Event{wall_time, step, summary{value: [{tag, simple_value}...]}}: scalars at one step.
std::string scalarsEvent(double wallTime, std::int64_t step, const std::vector<Scalar>& scalars);
// Event{wall_time, step, summary{value: {tag, metadata{plugin "text"}, tensor{DT_STRING [1]}}}}:
// text (Markdown) that TensorBoard's Text tab shows under `tag`.
std::string textEvent(double wallTime, std::int64_t step, const std::string& tag, const std::string& text);
// One hyperparameter of the HPARAMS tab: a number, a string or a bool.
struct HParam {
  std::string name;
  std::variant<double, std::string, bool> value;
};

// The three events of SummaryWriter.add_hparams without metrics (what accelerate writes for a
// run's config): the experiment (each hyperparameter's name and type), the session's start (the
// values) and its end (success), each a Summary.Value of the "hparams" plugin with no data.
std::vector<std::string> hparamsEvents(double wallTime, const std::vector<HParam>& hparams);

// Event{wall_time, step, session_log{status: START}}: TensorBoard drops the events of earlier
// sessions of this run whose step is at or after `step` (SummaryWriter's purge_step).
std::string sessionStartEvent(double wallTime, std::int64_t step);

}  // namespace sinter::io::tensorboard
