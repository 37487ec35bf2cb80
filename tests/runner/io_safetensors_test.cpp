#include "io/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using sinter::io::SafetensorsError;
using sinter::io::SafetensorsFile;
using sinter::io::writeSafetensors;

namespace {

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sinter_io_safetensors_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  // A file from a raw header string and data bytes, to build malformed inputs.
  std::string rawFile(const std::string& name, const std::string& header, const std::string& data,
                      int64_t declaredLength = -1) {
    const std::string path = file(name);
    std::ofstream out(path, std::ios::binary);
    uint64_t n = declaredLength < 0 ? header.size() : static_cast<uint64_t>(declaredLength);
    for (int i = 0; i < 8; ++i, n >>= 8) out.put(static_cast<char>(n & 0xff));
    out << header << data;
    return path;
  }

  static std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  static void expectErrorContaining(const std::string& path, const std::string& text) {
    try {
      SafetensorsFile f(path);
      FAIL() << "expected an error containing \"" << text << "\"";
    } catch (const SafetensorsError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }

  fs::path dir_;
};

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  std::vector<torch::ScalarType> types = {torch::kFloat32, torch::kFloat16, torch::kBFloat16, torch::kFloat64,
                                          torch::kInt64,   torch::kInt32,   torch::kInt16,    torch::kInt8,
                                          torch::kUInt8,   torch::kBool};
#if (TORCH_VERSION_MAJOR > 2) || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  types.push_back(torch::kFloat8_e4m3fn);
  types.push_back(torch::kFloat8_e5m2);
#endif
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  torch::manual_seed(0);
  for (torch::ScalarType t : types) {
    torch::Tensor v = (torch::randn({3, 5}) * 10).to(t);
    tensors.emplace_back(std::string("t.") + c10::toString(t), v);
  }
  tensors.emplace_back("scalar", torch::tensor(2.5));
  tensors.emplace_back("empty", torch::empty({0, 4}));
  const std::map<std::string, std::string> metadata = {{"ss_network_dim", "32"}, {"modelspec.title", "x \"q\""}};
  const std::string path = file("all.safetensors");
  writeSafetensors(path, tensors, metadata);

  SafetensorsFile f(path);
  EXPECT_EQ(f.metadata(), metadata);
  EXPECT_EQ(f.keys().size(), tensors.size());
  for (const auto& [key, expected] : tensors) {
    ASSERT_TRUE(f.has(key)) << key;
    torch::Tensor got = f.tensor(key);
    EXPECT_EQ(got.scalar_type(), expected.scalar_type()) << key;
    EXPECT_EQ(got.sizes(), expected.sizes()) << key;
    EXPECT_TRUE(torch::equal(got.to(torch::kFloat64), expected.to(torch::kFloat64))) << key;
  }
  EXPECT_EQ(f.info("t.Float").dtype, "F32");
  EXPECT_EQ(f.info("t.BFloat16").dtype, "BF16");
  EXPECT_FALSE(fs::exists(path + ".tmp-" + std::to_string(getpid())));
}

TEST_F(SafetensorsTest, HeaderIsPaddedAndOrderedLikeThePythonLibrary) {
  const std::string path = file("order.safetensors");
  writeSafetensors(path, {{"b", torch::zeros({3}, torch::kFloat16)},
                          {"a", torch::zeros({1}, torch::kFloat16)},
                          {"z", torch::zeros({1}, torch::kFloat32)},
                          {"i", torch::zeros({1}, torch::kInt64)}});
  const std::string bytes = readAll(path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u);
  const auto header = nlohmann::ordered_json::parse(bytes.substr(8, n));
  std::vector<std::string> order;
  for (auto it = header.begin(); it != header.end(); ++it) order.push_back(it.key());
  EXPECT_EQ(order, (std::vector<std::string>{"i", "z", "a", "b"}));
  EXPECT_EQ(header["i"]["data_offsets"].dump(), "[0,8]");
  EXPECT_EQ(header["b"]["data_offsets"].dump(), "[14,20]");
  EXPECT_EQ(bytes.size(), 8 + n + 20);
}

TEST_F(SafetensorsTest, TensorsStayValidAfterTheFileObjectIsGoneAndWritesDoNotReachTheFile) {
  const std::string path = file("keep.safetensors");
  writeSafetensors(path, {{"w", torch::arange(6, torch::kFloat32).reshape({2, 3})}});
  const std::string before = readAll(path);
  torch::Tensor t;
  {
    SafetensorsFile f(path);
    t = f.tensor("w");
  }
  t.add_(1);
  EXPECT_TRUE(torch::equal(t, torch::arange(1, 7, torch::kFloat32).reshape({2, 3})));
  EXPECT_EQ(readAll(path), before);
}

TEST_F(SafetensorsTest, OrigModIsStrippedOnReadAndNeverWritten) {
  const std::string header =
      R"({"_orig_mod.unet.w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"te._orig_mod.b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  const std::string path = rawFile("orig.safetensors", header, std::string(8, '\0'));
  SafetensorsFile f(path);
  EXPECT_EQ(f.keys(), (std::vector<std::string>{"te.b", "unet.w"}));
  EXPECT_EQ(f.info("unet.w").storedKey, "_orig_mod.unet.w");
  EXPECT_FALSE(f.has("_orig_mod.unet.w"));

  const std::string written = file("written.safetensors");
  writeSafetensors(written, {{"_orig_mod.x.weight", torch::ones({2})}});
  EXPECT_EQ(readAll(written).find("_orig_mod"), std::string::npos);
  EXPECT_TRUE(SafetensorsFile(written).has("x.weight"));

  const std::string clash = R"({"_orig_mod.w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  expectErrorContaining(rawFile("clash.safetensors", clash, std::string(8, '\0')), "same key");
}

TEST_F(SafetensorsTest, TruncatedFilesAreClearErrors) {
  const std::string good = file("good.safetensors");
  writeSafetensors(good, {{"w", torch::ones({16})}});
  const std::string bytes = readAll(good);
  const std::string cut = file("cut.safetensors");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  expectErrorContaining(cut, "truncated");
  const std::string tiny = file("tiny.safetensors");
  std::ofstream(tiny, std::ios::binary) << "abc";
  expectErrorContaining(tiny, "too short");
  const std::string headerCut = file("headercut.safetensors");
  std::ofstream(headerCut, std::ios::binary) << bytes.substr(0, 20);
  expectErrorContaining(headerCut, "truncated");
  const std::string empty = file("empty.safetensors");
  std::ofstream(empty, std::ios::binary).flush();
  expectErrorContaining(empty, "too short");
  expectErrorContaining(file("missing.safetensors"), "cannot open");
}

TEST_F(SafetensorsTest, MalformedHeadersAreClearErrors) {
  const std::string data(16, '\0');
  expectErrorContaining(rawFile("huge.safetensors", "{}", data, int64_t(1) << 40), "100 MB");
  expectErrorContaining(rawFile("json.safetensors", "{\"w\": [", data), "not valid JSON");
  expectErrorContaining(rawFile("array.safetensors", "[1,2]", data), "not a JSON object");
  expectErrorContaining(
      rawFile("dtype.safetensors", R"({"w":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})", data),
      "unknown dtype \"F31\"");
  expectErrorContaining(
      rawFile("size.safetensors", R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", data), "needs 8");
  expectErrorContaining(
      rawFile("neg.safetensors", R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", data), "negative");
  expectErrorContaining(
      rawFile("noshape.safetensors", R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", data), "\"shape\"");
  expectErrorContaining(
      rawFile("offsets.safetensors", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4]}})", data),
      "data_offsets");
  expectErrorContaining(
      rawFile("backwards.safetensors", R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", data),
      "begin after");
  expectErrorContaining(
      rawFile("beyond.safetensors", R"({"w":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})", data),
      "data ends at byte 32");
  expectErrorContaining(
      rawFile("overflow.safetensors",
              R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data),
      "too large");
  expectErrorContaining(
      rawFile("overlap.safetensors",
              R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
              data),
      "overlap");
  expectErrorContaining(rawFile("meta.safetensors", R"({"__metadata__":{"k":1}})", data), "not a string");
  expectErrorContaining(rawFile("entry.safetensors", R"({"w":3})", data), "not a JSON object");
}

TEST_F(SafetensorsTest, MissingKeyAndUnwritableDestinationAreClearErrors) {
  const std::string path = file("w.safetensors");
  writeSafetensors(path, {{"w", torch::ones({1})}});
  SafetensorsFile f(path);
  EXPECT_THROW(f.info("nope"), SafetensorsError);
  EXPECT_THROW(f.tensor("nope"), SafetensorsError);
  EXPECT_THROW(writeSafetensors(file("no/such/dir/x.safetensors"), {{"w", torch::ones({1})}}), SafetensorsError);
  EXPECT_THROW(writeSafetensors(file("dup.safetensors"), {{"w", torch::ones({1})}, {"_orig_mod.w", torch::ones({1})}}),
               SafetensorsError);
  EXPECT_FALSE(fs::exists(file("dup.safetensors")));
}

TEST_F(SafetensorsTest, StreamingWriterChecksWhatIsProduced) {
  const std::string path = file("stream.safetensors");
  std::vector<sinter::io::TensorDeclaration> entries = {{"a", torch::kFloat32, {2}}, {"b", torch::kBFloat16, {3}}};
  std::vector<size_t> calls;
  sinter::io::writeSafetensorsStreaming(path, entries, {}, [&](size_t i) {
    calls.push_back(i);
    return torch::full(entries[i].shape, double(i + 1), torch::TensorOptions().dtype(entries[i].dtype));
  });
  EXPECT_EQ(calls, (std::vector<size_t>{0, 1}));  // F32 before BF16, as laid out
  SafetensorsFile f(path);
  EXPECT_TRUE(torch::equal(f.tensor("b"), torch::full({3}, 2.0, torch::kBFloat16)));
  EXPECT_THROW(sinter::io::writeSafetensorsStreaming(file("bad.safetensors"), entries, {},
                                                     [&](size_t) { return torch::zeros({5}); }),
               SafetensorsError);
  EXPECT_FALSE(fs::exists(file("bad.safetensors")));
}

}  // namespace
