#include "io/tensorboard_event.h"

#include <cstring>

namespace sinter::io::tensorboard {

namespace {

// Protobuf's wire format: each field is a key (field number << 3 | wire type) followed by a
// varint, 8 or 4 little-endian bytes, or a varint length and that many bytes.
enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

class Message {
 public:
  Message& varint(std::uint32_t field, std::uint64_t v) {
    key(field, kVarint);
    putVarint(v);
    return *this;
  }
  Message& fixed64(std::uint32_t field, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key(field, kFixed64);
    putLittleEndian(bits, 8);
    return *this;
  }
  Message& fixed32(std::uint32_t field, float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key(field, kFixed32);
    putLittleEndian(bits, 4);
    return *this;
  }
  // Strings, bytes and embedded messages alike.
  Message& bytes(std::uint32_t field, const std::string& payload) {
    key(field, kLengthDelimited);
    putVarint(payload.size());
    out_ += payload;
    return *this;
  }
  Message& message(std::uint32_t field, const Message& m) { return bytes(field, m.out_); }
  const std::string& str() const { return out_; }

 private:
  void key(std::uint32_t field, WireType type) { putVarint((static_cast<std::uint64_t>(field) << 3) | type); }
  void putVarint(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  void putLittleEndian(std::uint64_t v, int size) {
    for (int i = 0; i < size; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  std::string out_;
};

// Field numbers (event.proto, summary.proto, tensor.proto, tensor_shape.proto).
namespace event {
constexpr std::uint32_t kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5, kSessionLog = 7;
}
namespace summary {
constexpr std::uint32_t kValue = 1;                                                  // Summary
constexpr std::uint32_t kTag = 1, kSimpleValue = 2, kTensor = 8, kMetadata = 9;      // Summary.Value
constexpr std::uint32_t kPluginData = 1, kPluginName = 1;                            // SummaryMetadata(.PluginData)
}  // namespace summary
namespace tensor {
constexpr std::uint32_t kDtype = 1, kShape = 2, kStringVal = 8;  // TensorProto
constexpr std::uint32_t kDim = 2, kDimSize = 1;                  // TensorShapeProto(.Dim)
constexpr std::uint64_t kDtString = 7;                           // DataType.DT_STRING
}  // namespace tensor
namespace plugin {
constexpr std::uint32_t kContent = 2;  // SummaryMetadata.PluginData.content
}
// tensorboard/plugins/hparams: plugin_data.proto, api.proto; google/protobuf/struct.proto's Value.
namespace hparams {
constexpr std::uint32_t kExperiment = 2, kSessionStartInfo = 3, kSessionEndInfo = 4;  // HParamsPluginData
constexpr std::uint32_t kHparamInfos = 4;                                            // Experiment
constexpr std::uint32_t kInfoName = 1, kInfoType = 4;                                // HParamInfo
constexpr std::uint64_t kTypeString = 1, kTypeBool = 2, kTypeFloat64 = 3;            // DataType
constexpr std::uint32_t kStartHparams = 1, kMapKey = 1, kMapValue = 2;               // SessionStartInfo's map
constexpr std::uint32_t kEndStatus = 1;                                              // SessionEndInfo
constexpr std::uint64_t kStatusSuccess = 1;                                          // Status
constexpr std::uint32_t kNumberValue = 2, kStringValue = 3, kBoolValue = 4;          // google.protobuf.Value
}  // namespace hparams
constexpr std::uint32_t kSessionStatus = 1;  // SessionLog.status
constexpr std::uint64_t kSessionStart = 1;   // SessionLog.START

// An Event's common head. proto3 leaves a zero step out, as protobuf's own encoders do; a zero
// simple_value is written (it is in Summary.Value's oneof, so it has presence).
Message eventHead(double wallTime, std::int64_t step) {
  Message e;
  e.fixed64(event::kWallTime, wallTime);
  if (step != 0) e.varint(event::kStep, static_cast<std::uint64_t>(step));  // int64: two's complement
  return e;
}

}  // namespace

std::string fileVersionEvent(double wallTime, std::int64_t step) {
  return eventHead(wallTime, step).bytes(event::kFileVersion, kFileVersion).str();
}

std::string scalarsEvent(double wallTime, std::int64_t step, const std::vector<Scalar>& scalars) {
  Message s;
  for (const Scalar& v : scalars) s.message(summary::kValue, Message().bytes(summary::kTag, v.tag).fixed32(summary::kSimpleValue, v.value));
  return eventHead(wallTime, step).message(event::kSummary, s).str();
}

std::string textEvent(double wallTime, std::int64_t step, const std::string& tag, const std::string& text) {
  // The text plugin's own content (TextPluginData, version 0) encodes to nothing.
  const Message metadata = Message().message(summary::kPluginData, Message().bytes(summary::kPluginName, "text"));
  const Message shape = Message().message(tensor::kDim, Message().varint(tensor::kDimSize, 1));
  const Message t = Message().varint(tensor::kDtype, tensor::kDtString).message(tensor::kShape, shape).bytes(tensor::kStringVal, text);
  // Fields in number order, as protobuf's own encoders write them.
  const Message value = Message().bytes(summary::kTag, tag).message(summary::kTensor, t).message(summary::kMetadata, metadata);
  return eventHead(wallTime, step).message(event::kSummary, Message().message(summary::kValue, value)).str();
}

std::vector<std::string> hparamsEvents(double wallTime, const std::vector<HParam>& hparams) {
  // A Summary.Value of the hparams plugin: its data is all in the metadata's content
  // (HParamsPluginData, version 0 left out).
  auto event = [&](const char* tag, std::uint32_t field, const Message& data) {
    const Message content = Message().message(field, data);
    const Message pluginData = Message().bytes(summary::kPluginName, "hparams").bytes(plugin::kContent, content.str());
    const Message value = Message().bytes(summary::kTag, tag).message(summary::kMetadata, Message().message(summary::kPluginData, pluginData));
    return eventHead(wallTime, 0).message(event::kSummary, Message().message(summary::kValue, value)).str();
  };
  Message experiment, start;
  for (const HParam& h : hparams) {
    Message v;
    std::uint64_t type = hparams::kTypeFloat64;
    if (const auto* d = std::get_if<double>(&h.value)) v.fixed64(hparams::kNumberValue, *d);
    else if (const auto* text = std::get_if<std::string>(&h.value)) v.bytes(hparams::kStringValue, *text), type = hparams::kTypeString;
    else v.varint(hparams::kBoolValue, std::get<bool>(h.value) ? 1 : 0), type = hparams::kTypeBool;
    experiment.message(hparams::kHparamInfos, Message().bytes(hparams::kInfoName, h.name).varint(hparams::kInfoType, type));
    start.message(hparams::kStartHparams, Message().bytes(hparams::kMapKey, h.name).message(hparams::kMapValue, v));
  }
  return {event("_hparams_/experiment", hparams::kExperiment, experiment),
          event("_hparams_/session_start_info", hparams::kSessionStartInfo, start),
          event("_hparams_/session_end_info", hparams::kSessionEndInfo, Message().varint(hparams::kEndStatus, hparams::kStatusSuccess))};
}

std::string sessionStartEvent(double wallTime, std::int64_t step) {
  return eventHead(wallTime, step).message(event::kSessionLog, Message().varint(kSessionStatus, kSessionStart)).str();
}

}  // namespace sinter::io::tensorboard
