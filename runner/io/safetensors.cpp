#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/pickle_file.h"

namespace sinter::io {

namespace {

// The Python library refuses headers above 100 MB; a larger length is a corrupt file.
constexpr uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;

struct DtypeEntry {
  const char* name;
  int64_t size;
  int rank;  // the Python library's dtype order; the writer lays out the widest first
};

constexpr DtypeEntry kDtypes[] = {
    {"BOOL", 1, 0}, {"U8", 1, 1},   {"I8", 1, 2},   {"F8_E5M2", 1, 3}, {"F8_E4M3", 1, 4},
    {"I16", 2, 5},  {"U16", 2, 6},  {"F16", 2, 7},  {"BF16", 2, 8},    {"I32", 4, 9},
    {"U32", 4, 10}, {"F32", 4, 11}, {"F64", 8, 12}, {"I64", 8, 13},    {"U64", 8, 14},
};

const DtypeEntry* findDtype(const std::string& name) {
  for (const DtypeEntry& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

std::string errnoText() { return std::strerror(errno); }

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

SafetensorsError::SafetensorsError(const std::string& path, const std::string& what)
    : std::runtime_error(path + ": " + what), path_(path) {}

int64_t safetensorsDtypeSize(const std::string& dtype) {
  const DtypeEntry* d = findDtype(dtype);
  return d ? d->size : -1;
}

std::optional<torch::ScalarType> safetensorsDtypeToTorch(const std::string& dtype) {
  if (dtype == "F32") return torch::kFloat32;
  if (dtype == "F16") return torch::kFloat16;
  if (dtype == "BF16") return torch::kBFloat16;
  if (dtype == "F64") return torch::kFloat64;
  if (dtype == "I64") return torch::kInt64;
  if (dtype == "I32") return torch::kInt32;
  if (dtype == "I16") return torch::kInt16;
  if (dtype == "I8") return torch::kInt8;
  if (dtype == "U8") return torch::kUInt8;
  if (dtype == "BOOL") return torch::kBool;
#if (TORCH_VERSION_MAJOR > 2) || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  // Float8 types arrived in libtorch 2.1.
  if (dtype == "F8_E4M3") return torch::kFloat8_e4m3fn;
  if (dtype == "F8_E5M2") return torch::kFloat8_e5m2;
#endif
  return std::nullopt;
}

std::string torchToSafetensorsDtype(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32: return "F32";
    case torch::kFloat16: return "F16";
    case torch::kBFloat16: return "BF16";
    case torch::kFloat64: return "F64";
    case torch::kInt64: return "I64";
    case torch::kInt32: return "I32";
    case torch::kInt16: return "I16";
    case torch::kInt8: return "I8";
    case torch::kUInt8: return "U8";
    case torch::kBool: return "BOOL";
#if (TORCH_VERSION_MAJOR > 2) || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    case torch::kFloat8_e4m3fn: return "F8_E4M3";
    case torch::kFloat8_e5m2: return "F8_E5M2";
#endif
    default: break;
  }
  throw std::invalid_argument(std::string("safetensors has no dtype for torch type ") + c10::toString(type));
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string stripOrigMod(const std::string& key) {
  static const std::string marker = "_orig_mod.";
  std::string out = key;
  for (size_t pos; (pos = out.find(marker)) != std::string::npos;) out.erase(pos, marker.size());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reader

struct SafetensorsFile::Mapping {
  void* base = MAP_FAILED;
  size_t size = 0;
  uint64_t dataStart = 0;  // 8 + header length
  ~Mapping() {
    if (base != MAP_FAILED) munmap(base, size);
  }
};

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path), mapping_(std::make_shared<Mapping>()) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SafetensorsError(path, "cannot open: " + errnoText());
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const std::string why = errnoText();
    ::close(fd);
    throw SafetensorsError(path, "cannot stat: " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw SafetensorsError(path, "not a regular file");
  }
  const uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  if (fileSize < 8) {
    ::close(fd);
    throw SafetensorsError(path, "truncated: " + std::to_string(fileSize) +
                                     " bytes, too short for the 8-byte header length");
  }
  // Private and writable: tensors viewing the mapping may be written to without touching the file.
  mapping_->base = mmap(nullptr, fileSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  const std::string mapError = errnoText();
  ::close(fd);
  if (mapping_->base == MAP_FAILED) throw SafetensorsError(path, "cannot map: " + mapError);
  mapping_->size = fileSize;
  const auto* bytes = static_cast<const unsigned char*>(mapping_->base);

  if (const std::optional<std::string> pickle = pickleCheckpointProblem(bytes, fileSize)) throw SafetensorsError(path, *pickle);
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | bytes[i];  // little-endian
  if (headerLength > kMaxHeaderBytes)
    throw SafetensorsError(path, "header length " + std::to_string(headerLength) +
                                     " is larger than the 100 MB limit: not a safetensors file, or corrupt");
  if (headerLength > fileSize - 8)
    throw SafetensorsError(path, "truncated: header length " + std::to_string(headerLength) + " but only " +
                                     std::to_string(fileSize - 8) + " bytes follow");
  mapping_->dataStart = 8 + headerLength;
  const uint64_t dataSize = fileSize - mapping_->dataStart;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes + 8, bytes + 8 + headerLength);
  } catch (const nlohmann::json::exception& e) {
    throw SafetensorsError(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw SafetensorsError(path, "header is not a JSON object");

  std::vector<const TensorInfo*> byOffset;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& storedKey = it.key();
    const nlohmann::json& value = it.value();
    if (storedKey == "__metadata__") {
      if (!value.is_object()) throw SafetensorsError(path, "__metadata__ is not a JSON object");
      for (auto m = value.begin(); m != value.end(); ++m) {
        if (!m.value().is_string())
          throw SafetensorsError(path, "__metadata__ value of \"" + m.key() + "\" is not a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor \"" + storedKey + "\": ";
    if (!value.is_object()) throw SafetensorsError(path, where + "entry is not a JSON object");
    TensorInfo info;
    info.storedKey = storedKey;
    if (!value.contains("dtype") || !value["dtype"].is_string())
      throw SafetensorsError(path, where + "missing or non-string \"dtype\"");
    info.dtype = value["dtype"].get<std::string>();
    const int64_t elementSize = safetensorsDtypeSize(info.dtype);
    if (elementSize < 0) throw SafetensorsError(path, where + "unknown dtype \"" + info.dtype + "\"");
    if (!value.contains("shape") || !value["shape"].is_array())
      throw SafetensorsError(path, where + "missing or non-array \"shape\"");
    uint64_t bytesNeeded = static_cast<uint64_t>(elementSize);
    for (const auto& dim : value["shape"]) {
      if (!dim.is_number_unsigned()) throw SafetensorsError(path, where + "shape has a non-integer or negative size");
      const uint64_t d = dim.get<uint64_t>();
      if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          (d != 0 && bytesNeeded > std::numeric_limits<uint64_t>::max() / d))
        throw SafetensorsError(path, where + "shape is too large");
      bytesNeeded *= d;
      info.shape.push_back(static_cast<int64_t>(d));
    }
    const auto& offsets = value.contains("data_offsets") ? value["data_offsets"] : nlohmann::json();
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      throw SafetensorsError(path, where + "\"data_offsets\" must be two non-negative integers");
    info.begin = offsets[0].get<uint64_t>();
    info.end = offsets[1].get<uint64_t>();
    if (info.begin > info.end) throw SafetensorsError(path, where + "data_offsets begin after they end");
    if (info.end > dataSize)
      throw SafetensorsError(path, where + "data ends at byte " + std::to_string(info.end) + " of a " +
                                       std::to_string(dataSize) + "-byte data section (file truncated?)");
    if (info.end - info.begin != bytesNeeded)
      throw SafetensorsError(path, where + "holds " + std::to_string(info.end - info.begin) + " bytes but " +
                                       info.dtype + " " + shapeText(info.shape) + " needs " +
                                       std::to_string(bytesNeeded));
    const std::string key = stripOrigMod(storedKey);
    auto [pos, inserted] = entries_.emplace(key, std::move(info));
    if (!inserted)
      throw SafetensorsError(path, "tensors \"" + pos->second.storedKey + "\" and \"" + storedKey +
                                       "\" are the same key once \"_orig_mod.\" is removed");
    byOffset.push_back(&pos->second);
  }
  std::sort(byOffset.begin(), byOffset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    const TensorInfo& prev = *byOffset[i - 1];
    const TensorInfo& cur = *byOffset[i];
    if (cur.begin < prev.end && cur.end > cur.begin && prev.end > prev.begin)
      throw SafetensorsError(path, "tensors \"" + prev.storedKey + "\" and \"" + cur.storedKey + "\" overlap");
  }
}

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;

std::vector<std::string> SafetensorsFile::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [key, info] : entries_) out.push_back(key);
  return out;
}

bool SafetensorsFile::has(const std::string& key) const { return entries_.count(key) != 0; }

bool SafetensorsFile::hasKeyStartingWith(const std::string& start) const {
  for (const std::string& key : keys())
    if (key.rfind(start, 0) == 0) return true;
  return false;
}

const TensorInfo& SafetensorsFile::info(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) throw SafetensorsError(path_, "no tensor named \"" + key + "\"");
  return it->second;
}

torch::Tensor SafetensorsFile::tensor(const std::string& key) const {
  const TensorInfo& i = info(key);
  const auto type = safetensorsDtypeToTorch(i.dtype);
  if (!type)
    throw SafetensorsError(path_, "tensor \"" + key + "\" has dtype " + i.dtype + ", which this libtorch (" +
                                      TORCH_VERSION + ") cannot represent");
  const auto options = torch::TensorOptions().dtype(*type).device(torch::kCPU);
  if (i.numel() == 0) return torch::empty(i.shape, options);
  char* data = static_cast<char*>(mapping_->base) + mapping_->dataStart + i.begin;
  const int64_t elementSize = safetensorsDtypeSize(i.dtype);
  if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(elementSize) != 0) {
    torch::Tensor copy = torch::empty(i.shape, options);
    std::memcpy(copy.data_ptr(), data, i.end - i.begin);
    return copy;
  }
  std::shared_ptr<Mapping> keepAlive = mapping_;
  return torch::from_blob(data, i.shape, [keepAlive](void*) {}, options);
}

// ---------------------------------------------------------------------------------------------
// Writer

namespace {

// A temp file beside the target, renamed over it only once everything is on disk.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path) : path_(path), tempPath_(path + ".tmp-" + std::to_string(getpid())) {
    fd_ = ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw SafetensorsError(path_, "cannot create " + tempPath_ + ": " + errnoText());
  }
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tempPath_.c_str());
  }
  void write(const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, std::min<size_t>(size, size_t(1) << 30));
      if (n < 0) {
        if (errno == EINTR) continue;
        throw SafetensorsError(path_, "write failed: " + errnoText());
      }
      p += n;
      size -= static_cast<size_t>(n);
    }
  }
  void commit() {
    if (::fsync(fd_) != 0) throw SafetensorsError(path_, "fsync failed: " + errnoText());
    if (::close(fd_) != 0) {
      fd_ = -1;
      throw SafetensorsError(path_, "close failed: " + errnoText());
    }
    fd_ = -1;
    if (::rename(tempPath_.c_str(), path_.c_str()) != 0)
      throw SafetensorsError(path_, "cannot rename " + tempPath_ + " into place: " + errnoText());
    committed_ = true;
    // Make the rename itself durable.
    const size_t slash = path_.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  std::string path_, tempPath_;
  int fd_ = -1;
  bool committed_ = false;
};

struct Planned {
  size_t index;
  std::string key;
  std::string dtype;
  int rank;
  std::vector<int64_t> shape;
  uint64_t bytes;
};

std::vector<Planned> planLayout(const std::string& path, const std::vector<TensorDeclaration>& entries) {
  std::vector<Planned> plan;
  plan.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const TensorDeclaration& e = entries[i];
    Planned p;
    p.index = i;
    p.key = stripOrigMod(e.key);
    if (p.key.empty() || p.key == "__metadata__") throw SafetensorsError(path, "invalid tensor key \"" + e.key + "\"");
    try {
      p.dtype = torchToSafetensorsDtype(e.dtype);
    } catch (const std::invalid_argument& err) {
      throw SafetensorsError(path, "tensor \"" + p.key + "\": " + err.what());
    }
    const DtypeEntry* d = findDtype(p.dtype);
    p.rank = d->rank;
    p.shape = e.shape;
    p.bytes = static_cast<uint64_t>(d->size);
    for (int64_t s : e.shape) p.bytes *= static_cast<uint64_t>(s);
    plan.push_back(std::move(p));
  }
  std::sort(plan.begin(), plan.end(), [](const Planned& a, const Planned& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.key < b.key;
  });
  for (size_t i = 1; i < plan.size(); ++i)
    if (plan[i].key == plan[i - 1].key) throw SafetensorsError(path, "duplicate tensor key \"" + plan[i].key + "\"");
  return plan;
}

std::string headerBytes(const std::vector<Planned>& plan, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const Planned& p : plan) {
    nlohmann::ordered_json entry;
    entry["dtype"] = p.dtype;
    entry["shape"] = p.shape;
    entry["data_offsets"] = {offset, offset + p.bytes};
    header[p.key] = std::move(entry);
    offset += p.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned
  return text;
}

}  // namespace

void writeSafetensorsStreaming(const std::string& path, const std::vector<TensorDeclaration>& entries,
                               const std::map<std::string, std::string>& metadata,
                               const std::function<torch::Tensor(size_t index)>& produce) {
  const std::vector<Planned> plan = planLayout(path, entries);
  const std::string header = headerBytes(plan, metadata);
  AtomicFile file(path);
  unsigned char length[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i, n >>= 8) length[i] = static_cast<unsigned char>(n & 0xff);
  file.write(length, 8);
  file.write(header.data(), header.size());
  for (const Planned& p : plan) {
    torch::Tensor t = produce(p.index);
    const TensorDeclaration& declared = entries[p.index];
    if (!t.defined() || t.scalar_type() != declared.dtype || t.sizes().vec() != declared.shape)
      throw SafetensorsError(path, "tensor \"" + p.key + "\" was declared " + p.dtype + " " + shapeText(declared.shape) +
                                       " but produced " +
                                       (t.defined() ? std::string(c10::toString(t.scalar_type())) + " " +
                                                          shapeText(t.sizes().vec())
                                                    : std::string("nothing")));
    t = t.to(torch::kCPU).contiguous();
    if (p.bytes) file.write(t.data_ptr(), p.bytes);
  }
  file.commit();
}

void writeSafetensors(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<TensorDeclaration> entries;
  entries.reserve(tensors.size());
  for (const auto& [key, t] : tensors) {
    if (!t.defined()) throw SafetensorsError(path, "tensor \"" + key + "\" is undefined");
    entries.push_back({key, t.scalar_type(), t.sizes().vec()});
  }
  writeSafetensorsStreaming(path, entries, metadata, [&](size_t i) { return tensors[i].second; });
}

}  // namespace sinter::io
