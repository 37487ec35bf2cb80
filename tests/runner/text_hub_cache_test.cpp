// The Hugging Face hub cache that sd-scripts' downloads leave: where it is looked for, and which
// snapshot of a repository is taken.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "text/bundled_tokenizers.h"
#include "text/hub_cache_tokenizers.h"

namespace fs = std::filesystem;
using namespace sinter::text;

namespace {

// Sets an environment variable for the scope, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) ::unsetenv(name_);
    else ::setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

void touch(const fs::path& p, const std::string& text = "x") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST(HubCache, RootsFollowHuggingFaceHubsOrder) {
  ScopedEnv a("HF_HUB_CACHE", "/a/hub"), b("HF_HOME", "/b"), c("XDG_CACHE_HOME", "/c"), h("HOME", "/home/u");
  EXPECT_EQ(hubCacheRoots(), (std::vector<std::string>{"/a/hub", "/b/hub", "/c/huggingface/hub", "/home/u/.cache/huggingface/hub"}));
}

TEST(HubCache, FindsTheMainRevisionsSnapshotThenAnyThatHasTheFiles) {
  const fs::path root = fs::temp_directory_path() / ("sinter_hub_cache_" + std::to_string(::getpid()));
  fs::remove_all(root);
  ScopedEnv cache("HF_HUB_CACHE", root.string()), home("HF_HOME", (root / "none").string()),
      xdg("XDG_CACHE_HOME", (root / "none").string()), h("HOME", (root / "none").string());
  EXPECT_FALSE(findCachedT5Tokenizer());
  EXPECT_NE(describeT5TokenizerSearch().find(root.string()), std::string::npos);

  const fs::path repo = root / "models--google--t5-v1_1-xxl";
  // A snapshot without the tokenizer (a config only) is not taken.
  touch(repo / "snapshots" / "aaa" / "config.json");
  EXPECT_FALSE(findCachedT5Tokenizer());
  touch(repo / "snapshots" / "bbb" / "tokenizer.json");  // not what T5Tokenizer reads
  EXPECT_FALSE(findCachedT5Tokenizer());
  touch(repo / "snapshots" / "bbb" / "spiece.model");
  EXPECT_EQ(findCachedT5Tokenizer(), (repo / "snapshots" / "bbb").string());
  touch(repo / "snapshots" / "ccc" / "spiece.model");
  touch(repo / "refs" / "main", "ccc");
  EXPECT_EQ(findCachedT5Tokenizer(), (repo / "snapshots" / "ccc").string());
  EXPECT_EQ(describeTokenizer("t5_tokenizer", (repo / "snapshots" / "ccc").string(), "t5"),
            "t5_tokenizer: the copy sd-scripts downloaded (Hugging Face cache, " + (repo / "snapshots" / "ccc").string() + ")");
  fs::remove_all(root);
}
