#include "core/events.h"

#include <set>

#include <nlohmann/json.hpp>

namespace sinter::events {

using nlohmann::json;

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

json filesToJson(const std::vector<DatasetFile>& files) {
  json out = json::array();
  for (const DatasetFile& f : files) out.push_back({{"path", f.path}, {"reason", f.reason}});
  return out;
}

json toJson(const Event& e) {
  return std::visit(
      Overloaded{
          [](const Start& s) {
            return json{{"type", "start"}, {"version", s.version}, {"device", s.device},
                        {"model_family", s.model_family}, {"training_mode", s.training_mode},
                        {"total_steps", s.total_steps}, {"epochs", s.epochs}, {"tokenizers", s.tokenizers},
                        {"images", s.images},           {"skipped", s.skipped}};
          },
          [](const CompilePlan& p) {
            return json{{"type", "compile_plan"}, {"enabled", p.enabled}, {"backend", p.backend}, {"mode", p.mode},
                        {"dynamic", p.dynamic}, {"fullgraph", p.fullgraph}, {"cache_size_limit", p.cache_size_limit},
                        {"mechanisms", p.mechanisms}, {"regions", p.regions}, {"unavailable", p.unavailable}};
          },
          [](const Warmup& w) { return json{{"type", "warmup"}, {"signature", w.signature}, {"seconds", w.seconds}}; },
          [](const Step& s) {
            json j{{"type", "step"},         {"step", s.step},       {"total", s.total},
                   {"epoch", s.epoch},       {"loss", s.loss},       {"avg_loss", s.avg_loss},
                   {"lr", s.lr},             {"it_per_s", s.it_per_s}, {"eta_s", s.eta_s},
                   {"step_ms", s.step_ms},   {"peak_mem_mb", s.peak_mem_mb}};
            for (const auto& [name, value] : s.figures) j[name] = value;
            return j;
          },
          [](const Epoch& e) {
            return json{{"type", "epoch"}, {"epoch", e.epoch}, {"epochs", e.epochs}, {"step", e.step},
                        {"avg_loss", e.avg_loss}};
          },
          [](const Validation& v) {
            return json{{"type", "validation"}, {"step", v.step}, {"epoch", v.epoch}, {"loss", v.loss}, {"kind", v.kind}};
          },
          [](const Saved& s) {
            json j{{"type", "saved"}, {"path", s.path}, {"kind", s.kind}};
            if (s.kind == "best") j["step"] = s.step, j["loss"] = s.loss, j["best"] = s.best;
            return j;
          },
          [](const Sample& s) {
            return json{{"type", "sample"}, {"path", s.path}, {"prompt", s.prompt}, {"step", s.step},
                        {"epoch", s.epoch},   {"index", s.index}, {"seconds", s.seconds}};
          },
          [](const Warning& w) { return json{{"type", "warning"}, {"message", w.message}}; },
          [](const Error& e) { return json{{"type", "error"}, {"message", e.message}}; },
          [](const DatasetCheck& c) {
            json buckets = json::array(), folders = json::array();
            for (const DatasetBucket& b : c.buckets)
              buckets.push_back({{"width", b.width}, {"height", b.height}, {"images", b.images}, {"with_repeats", b.with_repeats}});
            for (const DatasetFolder& f : c.folders)
              folders.push_back({{"path", f.path}, {"images", f.images}, {"repeats", f.repeats}, {"with_repeats", f.with_repeats},
                                 {"validation", f.validation}, {"regularization", f.regularization}});
            return json{{"type", "dataset_check"},
                        {"images", c.images},
                        {"contents_compared", c.contents_compared},
                        {"pixels_decoded", c.pixels_decoded},
                        {"refusals", c.refusals},
                        {"warnings", c.warnings},
                        {"missing_captions", filesToJson(c.missing_captions)},
                        {"empty_captions", filesToJson(c.empty_captions)},
                        {"too_small", filesToJson(c.too_small)},
                        {"unreadable", filesToJson(c.unreadable)},
                        {"duplicates", c.duplicates},
                        {"buckets", buckets},
                        {"folders", folders}};
          },
          [](const Control& c) {
            return json{{"type", "control"}, {"command", c.command}, {"step", c.step},       {"epoch", c.epoch},
                        {"result", c.result}, {"seconds", c.seconds}, {"message", c.message}};
          },
          [](const GridCell& g) {
            return json{{"type", "grid_cell"}, {"row", g.row},   {"rows", g.rows},     {"column", g.column},
                        {"columns", g.columns}, {"file", g.file}, {"prompt", g.prompt}, {"seconds", g.seconds}};
          },
          [](const Done& d) {
            json j{{"type", "done"}, {"status", d.status}, {"steps", d.steps}, {"seconds", d.seconds}};
            if (!d.reason.empty()) j["reason"] = d.reason, j["message"] = d.message;
            return j;
          },
          [](const Unknown& u) { return json{{"type", u.type}}; },
      },
      e);
}

// Tolerant field readers: a missing or mistyped field keeps the default.
template <class T>
void read(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
  }
}

// The dataset check's lists of objects: an item that is no object of the expected fields keeps
// their defaults; one that is not an object at all is left out.
std::vector<DatasetFile> readFiles(const json& j, const char* key) {
  std::vector<DatasetFile> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const json& item : *it) {
    if (!item.is_object()) continue;
    DatasetFile f;
    read(item, "path", f.path), read(item, "reason", f.reason);
    out.push_back(f);
  }
  return out;
}

DatasetCheck readDatasetCheck(const json& j) {
  DatasetCheck c;
  read(j, "images", c.images), read(j, "contents_compared", c.contents_compared), read(j, "pixels_decoded", c.pixels_decoded);
  read(j, "refusals", c.refusals), read(j, "warnings", c.warnings), read(j, "duplicates", c.duplicates);
  c.missing_captions = readFiles(j, "missing_captions");
  c.empty_captions = readFiles(j, "empty_captions");
  c.too_small = readFiles(j, "too_small");
  c.unreadable = readFiles(j, "unreadable");
  if (auto it = j.find("buckets"); it != j.end() && it->is_array())
    for (const json& item : *it) {
      if (!item.is_object()) continue;
      DatasetBucket b;
      read(item, "width", b.width), read(item, "height", b.height), read(item, "images", b.images);
      read(item, "with_repeats", b.with_repeats);
      c.buckets.push_back(b);
    }
  if (auto it = j.find("folders"); it != j.end() && it->is_array())
    for (const json& item : *it) {
      if (!item.is_object()) continue;
      DatasetFolder f;
      read(item, "path", f.path), read(item, "images", f.images), read(item, "repeats", f.repeats);
      read(item, "with_repeats", f.with_repeats), read(item, "validation", f.validation);
      read(item, "regularization", f.regularization);
      c.folders.push_back(f);
    }
  return c;
}

}  // namespace

std::string typeName(const Event& e) { return toJson(e)["type"].get<std::string>(); }

std::string toJsonLine(const Event& e) {
  // Invalid UTF-8 in a message (a file name, say) must not stop the stream: replace it.
  return toJson(e).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Event> parseJsonLine(const std::string& line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto t = j.find("type");
  if (t == j.end() || !t->is_string()) return std::nullopt;
  const std::string type = t->get<std::string>();
  if (type == "start") {
    Start s;
    read(j, "version", s.version), read(j, "device", s.device), read(j, "model_family", s.model_family);
    read(j, "training_mode", s.training_mode), read(j, "total_steps", s.total_steps), read(j, "epochs", s.epochs);
    read(j, "tokenizers", s.tokenizers), read(j, "images", s.images), read(j, "skipped", s.skipped);
    return s;
  }
  if (type == "compile_plan") {
    CompilePlan p;
    read(j, "enabled", p.enabled), read(j, "backend", p.backend), read(j, "mode", p.mode);
    read(j, "dynamic", p.dynamic), read(j, "fullgraph", p.fullgraph), read(j, "cache_size_limit", p.cache_size_limit);
    read(j, "mechanisms", p.mechanisms), read(j, "regions", p.regions), read(j, "unavailable", p.unavailable);
    return p;
  }
  if (type == "warmup") {
    Warmup w;
    read(j, "signature", w.signature), read(j, "seconds", w.seconds);
    return w;
  }
  if (type == "step") {
    Step s;
    read(j, "step", s.step), read(j, "total", s.total), read(j, "epoch", s.epoch), read(j, "loss", s.loss);
    read(j, "avg_loss", s.avg_loss), read(j, "lr", s.lr), read(j, "it_per_s", s.it_per_s), read(j, "eta_s", s.eta_s);
    read(j, "step_ms", s.step_ms), read(j, "peak_mem_mb", s.peak_mem_mb);
    // Any other number is one of the method's figures.
    static const std::set<std::string> known = {"type", "step", "total", "epoch", "loss", "avg_loss",
                                                "lr", "it_per_s", "eta_s", "step_ms", "peak_mem_mb"};
    for (const auto& [key, value] : j.items())
      if (!known.count(key) && value.is_number()) s.figures.emplace_back(key, value.get<double>());
    return s;
  }
  if (type == "epoch") {
    Epoch e;
    read(j, "epoch", e.epoch), read(j, "epochs", e.epochs), read(j, "step", e.step), read(j, "avg_loss", e.avg_loss);
    return e;
  }
  if (type == "validation") {
    Validation v;
    read(j, "step", v.step), read(j, "epoch", v.epoch), read(j, "loss", v.loss), read(j, "kind", v.kind);
    return v;
  }
  if (type == "saved") {
    Saved s;
    read(j, "path", s.path), read(j, "kind", s.kind), read(j, "step", s.step), read(j, "loss", s.loss), read(j, "best", s.best);
    return s;
  }
  if (type == "sample") {
    Sample s;
    read(j, "path", s.path), read(j, "prompt", s.prompt), read(j, "step", s.step), read(j, "epoch", s.epoch);
    read(j, "index", s.index), read(j, "seconds", s.seconds);
    return s;
  }
  if (type == "warning") {
    Warning w;
    read(j, "message", w.message);
    return w;
  }
  if (type == "error") {
    Error e;
    read(j, "message", e.message);
    return e;
  }
  if (type == "dataset_check") return readDatasetCheck(j);
  if (type == "control") {
    Control c;
    read(j, "command", c.command), read(j, "step", c.step), read(j, "epoch", c.epoch), read(j, "result", c.result);
    read(j, "seconds", c.seconds), read(j, "message", c.message);
    return c;
  }
  if (type == "grid_cell") {
    GridCell g;
    read(j, "row", g.row), read(j, "rows", g.rows), read(j, "column", g.column), read(j, "columns", g.columns);
    read(j, "file", g.file), read(j, "prompt", g.prompt), read(j, "seconds", g.seconds);
    return g;
  }
  if (type == "done") {
    Done d;
    read(j, "status", d.status), read(j, "steps", d.steps), read(j, "seconds", d.seconds), read(j, "reason", d.reason);
    read(j, "message", d.message);
    return d;
  }
  return Unknown{type};
}

}  // namespace sinter::events
