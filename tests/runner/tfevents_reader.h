#pragma once
// The tests' own reader of TensorBoard event files: splits the TFRecord framing, checks both CRCs
// of every record and decodes the Event fields the writer uses from protobuf's wire format. It
// shares nothing with the writer but the CRC-32C function (checked against known vectors).
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/crc32c.h"

namespace sinter::test {

struct TfValue {
  std::string tag;
  std::optional<float> simpleValue;
  std::string pluginName;            // metadata.plugin_data.plugin_name
  std::string pluginContent;         // metadata.plugin_data.content
  std::vector<std::string> strings;  // tensor.string_val
  std::optional<std::uint64_t> dtype;
};

struct TfEvent {
  double wallTime = 0;
  std::int64_t step = 0;
  std::string fileVersion;
  std::vector<TfValue> values;
  std::optional<std::uint64_t> sessionStatus;
};

namespace tfevents_detail {

inline std::uint64_t littleEndian(const std::string& s, std::size_t at, int size) {
  std::uint64_t v = 0;
  for (int i = 0; i < size; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

// One field of a message: its number, wire type and either its integer bits or its bytes.
struct Field {
  std::uint32_t number = 0, wireType = 0;
  std::uint64_t bits = 0;
  std::string bytes;
};

inline std::vector<Field> fields(const std::string& m) {
  std::vector<Field> out;
  std::size_t i = 0;
  auto varint = [&] {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (i >= m.size() || shift > 63) throw std::runtime_error("truncated varint");
      const auto b = static_cast<unsigned char>(m[i++]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  while (i < m.size()) {
    Field f;
    const std::uint64_t key = varint();
    f.number = static_cast<std::uint32_t>(key >> 3);
    f.wireType = static_cast<std::uint32_t>(key & 7);
    switch (f.wireType) {
      case 0: f.bits = varint(); break;
      case 1:
        if (i + 8 > m.size()) throw std::runtime_error("truncated fixed64");
        f.bits = littleEndian(m, i, 8), i += 8;
        break;
      case 5:
        if (i + 4 > m.size()) throw std::runtime_error("truncated fixed32");
        f.bits = littleEndian(m, i, 4), i += 4;
        break;
      case 2: {
        const std::uint64_t n = varint();
        if (i + n > m.size()) throw std::runtime_error("truncated length-delimited field");
        f.bytes = m.substr(i, n), i += n;
        break;
      }
      default: throw std::runtime_error("unexpected wire type " + std::to_string(f.wireType));
    }
    out.push_back(std::move(f));
  }
  return out;
}

inline TfValue value(const std::string& m) {
  TfValue v;
  for (const Field& f : fields(m)) {
    if (f.number == 1) v.tag = f.bytes;
    if (f.number == 2 && f.wireType == 5) {
      const auto bits = static_cast<std::uint32_t>(f.bits);
      float x;
      std::memcpy(&x, &bits, 4);
      v.simpleValue = x;
    }
    if (f.number == 9)
      for (const Field& md : fields(f.bytes))
        if (md.number == 1)
          for (const Field& pd : fields(md.bytes)) {
            if (pd.number == 1) v.pluginName = pd.bytes;
            else if (pd.number == 2) v.pluginContent = pd.bytes;
          }
    if (f.number == 8)
      for (const Field& t : fields(f.bytes)) {
        if (t.number == 1) v.dtype = t.bits;
        if (t.number == 8) v.strings.push_back(t.bytes);
      }
  }
  return v;
}

inline TfEvent event(const std::string& m) {
  TfEvent e;
  for (const Field& f : fields(m)) {
    if (f.number == 1 && f.wireType == 1) std::memcpy(&e.wallTime, &f.bits, 8);
    if (f.number == 2) e.step = static_cast<std::int64_t>(f.bits);
    if (f.number == 3) e.fileVersion = f.bytes;
    if (f.number == 5)
      for (const Field& s : fields(f.bytes))
        if (s.number == 1) e.values.push_back(value(s.bytes));
    if (f.number == 7)
      for (const Field& s : fields(f.bytes))
        if (s.number == 1) e.sessionStatus = s.bits;
  }
  return e;
}

}  // namespace tfevents_detail

// Every event of the file at `path`; throws naming the record whose framing or CRC is wrong.
inline std::vector<TfEvent> readEventFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  std::vector<TfEvent> events;
  std::size_t at = 0;
  while (at < s.size()) {
    const std::string where = path + " record " + std::to_string(events.size());
    if (at + 12 > s.size()) throw std::runtime_error(where + ": truncated header");
    const std::string length = s.substr(at, 8);
    if (io::maskCrc32c(io::crc32c(length)) != tfevents_detail::littleEndian(s, at + 8, 4))
      throw std::runtime_error(where + ": length CRC mismatch");
    const std::uint64_t n = tfevents_detail::littleEndian(s, at, 8);
    if (at + 12 + n + 4 > s.size()) throw std::runtime_error(where + ": truncated data");
    const std::string data = s.substr(at + 12, n);
    if (io::maskCrc32c(io::crc32c(data)) != tfevents_detail::littleEndian(s, at + 12 + n, 4))
      throw std::runtime_error(where + ": data CRC mismatch");
    events.push_back(tfevents_detail::event(data));
    at += 12 + n + 4;
  }
  return events;
}

// The scalars of `events` with tag `tag`, by step.
inline std::map<std::int64_t, float> scalarsByStep(const std::vector<TfEvent>& events, const std::string& tag) {
  std::map<std::int64_t, float> out;
  for (const TfEvent& e : events)
    for (const TfValue& v : e.values)
      if (v.tag == tag && v.simpleValue) out[e.step] = *v.simpleValue;
  return out;
}

}  // namespace sinter::test
