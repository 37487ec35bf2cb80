#include "text/sentencepiece_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "text/sentencepiece_module.h"

namespace sinter::text {

namespace fs = std::filesystem;

struct SentencePieceModule {
  std::string path;
  decltype(&sinter_spm_load) load = nullptr;
  decltype(&sinter_spm_encode) encode = nullptr;
  decltype(&sinter_spm_free) free = nullptr;
};

namespace {

template <typename Function>
Function symbol(void* library, const std::string& path, const char* name) {
  void* address = ::dlsym(library, name);
  if (!address) throw SentencePieceError(path + " is not Sinter's SentencePiece module: it has no " + name);
  return reinterpret_cast<Function>(address);
}

// A namespace of its own (dlmopen with LM_ID_NEWLM), not dlopen with RTLD_LOCAL | RTLD_DEEPBIND:
// DEEPBIND keeps libsentencepiece's protobuf to itself, but also binds its std::cerr to
// libstdc++'s own storage, which stays unconstructed wherever the executable has a copy relocation
// for std::cerr (any PIE that prints to it, the runner and the tests): SentencePiece's logging and
// CHECK messages then segfault. In a namespace of its own the module has its own libstdc++ and
// libc, and shares nothing with the caller but plain buffers (sentencepiece_module.h).
const SentencePieceModule& loadModule(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<SentencePieceModule>> loaded;  // never unloaded
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return *it->second;
  // Closed again unless it turns out to be the module.
  std::unique_ptr<void, int (*)(void*)> opened(::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL), ::dlclose);
  if (!opened) {
    const char* error = ::dlerror();
    std::string reason = error ? error : "unknown reason";
    if (reason.find("libsentencepiece") != std::string::npos) reason += " (install Debian's libsentencepiece0)";
    throw SentencePieceError("cannot load SentencePiece's module " + path + ": " + reason);
  }
  void* library = opened.get();
  const auto version = symbol<decltype(&sinter_spm_abi_version)>(library, path, "sinter_spm_abi_version");
  if (version() != SINTER_SPM_ABI_VERSION)
    throw SentencePieceError(path + " is SentencePiece's module of another Sinter build (interface " +
                             std::to_string(version()) + ", this one needs " +
                             std::to_string(SINTER_SPM_ABI_VERSION) + ")");
  auto module = std::make_unique<SentencePieceModule>();
  module->path = path;
  module->load = symbol<decltype(&sinter_spm_load)>(library, path, "sinter_spm_load");
  module->encode = symbol<decltype(&sinter_spm_encode)>(library, path, "sinter_spm_encode");
  module->free = symbol<decltype(&sinter_spm_free)>(library, path, "sinter_spm_free");
  opened.release();
  return *(loaded[path] = std::move(module));
}

const SentencePieceModule& findModule(const std::vector<std::string>& candidates) {
  if (!sentencePieceModuleBuilt())
    throw SentencePieceError("this build has no SentencePiece (configured with -DSINTER_WITH_SENTENCEPIECE=OFF)");
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return loadModule(c);
  }
  std::string looked;
  for (const std::string& c : candidates) looked += "\n  " + c;
  throw SentencePieceError("SentencePiece's module (built beside sinter-runner) is missing; looked for:" + looked);
}

std::string errorText(const char* buffer) { return buffer[0] ? buffer : "unknown reason"; }

}  // namespace

#ifdef SINTER_SENTENCEPIECE_MODULE_NAME

bool sentencePieceModuleBuilt() { return true; }

std::vector<std::string> sentencePieceModuleCandidates() {
  std::vector<std::string> candidates;
  std::error_code ec;
  const fs::path exeDir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (!ec) {
    candidates.push_back((exeDir / SINTER_SENTENCEPIECE_MODULE_NAME).string());
    const fs::path installed = exeDir / SINTER_SENTENCEPIECE_MODULE_INSTALL_DIR / SINTER_SENTENCEPIECE_MODULE_NAME;
    candidates.push_back(installed.lexically_normal().string());
  }
  candidates.push_back(SINTER_SENTENCEPIECE_MODULE_BUILD_PATH);
  return candidates;
}

#else

bool sentencePieceModuleBuilt() { return false; }
std::vector<std::string> sentencePieceModuleCandidates() { return {}; }

#endif

SentencePieceModel::SentencePieceModel(const std::string& modelFile, const std::vector<std::string>& moduleCandidates) {
  try {
    module_ = &findModule(moduleCandidates);
  } catch (const SentencePieceError& e) {
    throw SentencePieceError("cannot read " + modelFile + ": " + e.what());
  }
  char error[1024] = "";
  handle_ = module_->load(modelFile.c_str(), error, sizeof error);
  if (!handle_) throw SentencePieceError("cannot read " + modelFile + ": " + errorText(error));
}

SentencePieceModel::~SentencePieceModel() {
  if (handle_) module_->free(handle_);
}

SentencePieceModel::SentencePieceModel(SentencePieceModel&& other) noexcept
    : module_(other.module_), handle_(other.handle_) {
  other.handle_ = nullptr;
}

SentencePieceModel& SentencePieceModel::operator=(SentencePieceModel&& other) noexcept {
  if (this != &other) {
    if (handle_) module_->free(handle_);
    module_ = other.module_;
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

std::vector<int> SentencePieceModel::encode(const std::string& text) const {
  // Most pieces span two bytes or more; the module returns the count when they need more room.
  std::vector<int> ids(text.size() / 2 + 8);
  char error[1024] = "";
  for (;;) {
    const long n = module_->encode(handle_, text.data(), text.size(), ids.data(), ids.size(), error, sizeof error);
    if (n < 0) throw SentencePieceError("cannot encode '" + text + "': " + errorText(error));
    const bool fits = static_cast<size_t>(n) <= ids.size();
    ids.resize(static_cast<size_t>(n));
    if (fits) return ids;
  }
}

const std::string& SentencePieceModel::modulePath() const { return module_->path; }

}  // namespace sinter::text
