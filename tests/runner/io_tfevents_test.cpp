// TensorBoard event files: CRC-32C and its mask against published vectors, the TFRecord framing and
// the Event encoding byte for byte against hand-derived bytes, and files written by
// EventFileWriter read back by the tests' own reader (tfevents_reader.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <regex>

#include "io/crc32c.h"
#include "io/tensorboard_event.h"
#include "io/tfevents_writer.h"
#include "tfevents_reader.h"

namespace fs = std::filesystem;
namespace tb = sinter::io::tensorboard;
using sinter::io::crc32c;
using sinter::io::maskCrc32c;
using sinter::test::readEventFile;
using sinter::test::scalarsByStep;

namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += digits[c >> 4], out += digits[c & 15];
  return out;
}

class TfEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sinter_io_tfevents_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace

// RFC 3720 (iSCSI) B.4's vectors and the "123456789" check value of CRC-32C.
TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
}

// ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2^32.
TEST(Crc32c, Mask) {
  EXPECT_EQ(maskCrc32c(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(maskCrc32c(0u), 0xA282EAD8u);
  EXPECT_EQ(maskCrc32c(crc32c(std::string(8, '\0'))), 0x07980329u);
}

// uint64 length, masked crc of those 8 bytes, the data, masked crc of the data; little-endian.
TEST(TfRecord, Framing) {
  EXPECT_EQ(hex(tb::tfRecord("abc")), "0300000000000000" "b099490e" "616263" "6e57f121");
  EXPECT_EQ(hex(tb::tfRecord("")), "0000000000000000" "29039807" "" "d8ea82a2");
}

// Event{wall_time 1.5, step 3, summary{value{tag "a", simple_value 0.5}}}, derived by hand from
// protobuf's wire format: keys 0x09 (1, fixed64), 0x10 (2, varint), 0x2a (5, bytes); Summary
// value 0x0a (1, bytes); Value tag 0x0a, simple_value 0x15 (2, fixed32).
TEST(TensorboardEvent, ScalarEncoding) {
  EXPECT_EQ(hex(tb::scalarsEvent(1.5, 3, {{"a", 0.5f}})), "09000000000000f83f" "1003" "2a0a" "0a08" "0a0161" "150000003f");
  // A zero step is left out (proto3); file_version is field 3.
  EXPECT_EQ(hex(tb::fileVersionEvent(1.5, 0)), "09000000000000f83f" "1a0d" + hex("brain.Event:2"));
  // A step of 300 is a two-byte varint.
  EXPECT_EQ(hex(tb::fileVersionEvent(0.0, 300)).substr(18, 6), "10ac02");
}

TEST_F(TfEventsTest, ScalarsAndTextReadBack) {
  std::string path;
  {
    tb::EventFileWriter w(dir_.string() + "/run/network_train", {});
    path = w.path();
    for (int step = 1; step <= 25; ++step)
      w.addScalars(step, {{"loss/current", 1.0f / step}, {"loss/average", 0.25f * step}, {"lr/unet", 1e-4f}});
    w.addScalars(2, {{"loss/epoch_average", 0.125f}});
    w.addText(0, "config/text_summary", "| key | value |\n|---|---|\n| seed | 42 |");
  }
  const std::vector<sinter::test::TfEvent> events = readEventFile(path);
  ASSERT_EQ(events.size(), 1u + 25 + 1 + 1);
  EXPECT_EQ(events[0].fileVersion, "brain.Event:2");
  EXPECT_GT(events[0].wallTime, 1.6e9);
  const auto current = scalarsByStep(events, "loss/current");
  ASSERT_EQ(current.size(), 25u);
  for (int step = 1; step <= 25; ++step) {
    EXPECT_EQ(current.at(step), 1.0f / step) << step;  // a float stored and read back bit for bit
    EXPECT_EQ(scalarsByStep(events, "loss/average").at(step), 0.25f * step);
  }
  EXPECT_EQ(scalarsByStep(events, "lr/unet").at(7), 1e-4f);
  EXPECT_EQ(scalarsByStep(events, "loss/epoch_average").at(2), 0.125f);
  const sinter::test::TfEvent& text = events.back();
  ASSERT_EQ(text.values.size(), 1u);
  EXPECT_EQ(text.values[0].tag, "config/text_summary");
  EXPECT_EQ(text.values[0].pluginName, "text");
  EXPECT_EQ(text.values[0].dtype, 7u);  // DT_STRING
  ASSERT_EQ(text.values[0].strings.size(), 1u);
  EXPECT_EQ(text.values[0].strings[0], "| key | value |\n|---|---|\n| seed | 42 |");
}

// events.out.tfevents.<10 digits>.<host>.<pid>.<n><suffix>, in the folder it was given (made with
// its parents).
TEST_F(TfEventsTest, FileNameAndSuffix) {
  tb::EventFileOptions options;
  options.filenameSuffix = ".sinter";
  tb::EventFileWriter w((dir_ / "a" / "b").string(), options);
  EXPECT_EQ(fs::path(w.path()).parent_path(), dir_ / "a" / "b");
  const std::string name = fs::path(w.path()).filename().string();
  EXPECT_TRUE(std::regex_match(name, std::regex(R"(events\.out\.tfevents\.\d{10}\.[^.]+.*\.)" + std::to_string(getpid()) +
                                                R"(\.\d+\.sinter)")))
      << name;
}

// Events wait in memory until max_queue of them do, or flush_secs pass; close writes the rest.
TEST_F(TfEventsTest, MaxQueueAndClose) {
  tb::EventFileOptions options;
  options.maxQueue = 3;
  options.flushSeconds = 1e9;
  tb::EventFileWriter w(dir_.string(), options);
  EXPECT_EQ(readEventFile(w.path()).size(), 1u);  // the file version, flushed on opening
  w.addScalars(1, {{"loss", 1.0f}});
  w.addScalars(2, {{"loss", 2.0f}});
  EXPECT_EQ(readEventFile(w.path()).size(), 1u);
  w.addScalars(3, {{"loss", 3.0f}});
  EXPECT_EQ(readEventFile(w.path()).size(), 4u);
  w.addScalars(4, {{"loss", 4.0f}});
  w.close();
  EXPECT_EQ(scalarsByStep(readEventFile(w.path()), "loss").size(), 4u);
  EXPECT_THROW(w.addScalars(5, {{"loss", 5.0f}}), std::runtime_error);
}

TEST_F(TfEventsTest, FlushSecondsZeroWritesEveryEvent) {
  tb::EventFileOptions options;
  options.flushSeconds = 0;
  tb::EventFileWriter w(dir_.string(), options);
  w.addScalars(1, {{"loss", 1.0f}});
  EXPECT_EQ(readEventFile(w.path()).size(), 2u);
}

// purge_step: a second file-version event at that step and a SessionLog START (status 1).
TEST_F(TfEventsTest, PurgeStep) {
  tb::EventFileOptions options;
  options.purgeStep = 40;
  tb::EventFileWriter w(dir_.string(), options);
  const auto events = readEventFile(w.path());
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].step, 40);
  EXPECT_EQ(events[1].fileVersion, "brain.Event:2");
  EXPECT_EQ(events[2].step, 40);
  EXPECT_EQ(events[2].sessionStatus, 1u);
}

// The reader refuses a record whose data was changed after it was written.
TEST_F(TfEventsTest, CorruptedRecordIsRefused) {
  std::string path;
  {
    tb::EventFileWriter w(dir_.string(), {});
    path = w.path();
    w.addScalars(1, {{"loss", 1.0f}});
  }
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(fs::file_size(path) - 6));
  f.put('\x7f');
  f.close();
  EXPECT_THROW(readEventFile(path), std::runtime_error);
}

TEST_F(TfEventsTest, UnwritableFolderIsAnErrorNamingIt) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "plain-file";
  std::ofstream(file) << "x";
  try {
    tb::EventFileWriter w((file / "logs").string(), {});
    FAIL() << "a folder under a file was made";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((file / "logs").string()), std::string::npos) << e.what();
  }
}

// SummaryWriter.add_hparams without metrics: the experiment names each hyperparameter with its
// type (DataType: 1 string, 2 bool, 3 float64), the session start holds the values in its map
// (google.protobuf.Value: 2 number, 3 string, 4 bool), the session end says success (1).
TEST(TensorboardEvent, Hparams) {
  using sinter::test::tfevents_detail::Field;
  using sinter::test::tfevents_detail::fields;
  const std::vector<std::string> events = tb::hparamsEvents(2.0, {{"learning_rate", 0.5}, {"optimizer_type", std::string("AdamW")},
                                                                   {"cache_latents", false}});
  ASSERT_EQ(events.size(), 3u);
  std::vector<sinter::test::TfValue> values;
  for (const std::string& e : events) {
    const sinter::test::TfEvent decoded = sinter::test::tfevents_detail::event(e);
    ASSERT_EQ(decoded.values.size(), 1u);
    EXPECT_EQ(decoded.values[0].pluginName, "hparams");
    EXPECT_FALSE(decoded.values[0].simpleValue.has_value());
    values.push_back(decoded.values[0]);
  }
  EXPECT_EQ(values[0].tag, "_hparams_/experiment");
  EXPECT_EQ(values[1].tag, "_hparams_/session_start_info");
  EXPECT_EQ(values[2].tag, "_hparams_/session_end_info");
  // HParamsPluginData: version 0 (left out), then the oneof's field 2, 3 or 4.
  auto only = [](const std::string& content, std::uint32_t field) {
    const std::vector<Field> f = fields(content);
    EXPECT_EQ(f.size(), 1u);
    EXPECT_EQ(f.at(0).number, field);
    return f.at(0).bytes;
  };
  std::vector<std::pair<std::string, std::uint64_t>> infos;
  for (const Field& info : fields(only(values[0].pluginContent, 2))) {
    ASSERT_EQ(info.number, 4u);  // hparam_infos
    std::pair<std::string, std::uint64_t> nameType;
    for (const Field& f : fields(info.bytes)) {
      if (f.number == 1) nameType.first = f.bytes;
      if (f.number == 4) nameType.second = f.bits;
    }
    infos.push_back(nameType);
  }
  EXPECT_EQ(infos, (std::vector<std::pair<std::string, std::uint64_t>>{{"learning_rate", 3}, {"optimizer_type", 1}, {"cache_latents", 2}}));
  std::map<std::string, Field> start;
  for (const Field& entry : fields(only(values[1].pluginContent, 3))) {
    ASSERT_EQ(entry.number, 1u);  // the hparams map
    const std::vector<Field> kv = fields(entry.bytes);
    ASSERT_EQ(kv.size(), 2u);
    const std::vector<Field> value = fields(kv[1].bytes);
    ASSERT_EQ(value.size(), 1u);
    start[kv[0].bytes] = value[0];
  }
  ASSERT_EQ(start.size(), 3u);
  double lr;
  std::memcpy(&lr, &start.at("learning_rate").bits, 8);
  EXPECT_EQ(start.at("learning_rate").number, 2u);
  EXPECT_EQ(lr, 0.5);
  EXPECT_EQ(start.at("optimizer_type").number, 3u);
  EXPECT_EQ(start.at("optimizer_type").bytes, "AdamW");
  EXPECT_EQ(start.at("cache_latents").number, 4u);
  EXPECT_EQ(start.at("cache_latents").bits, 0u);
  const std::vector<Field> end = fields(only(values[2].pluginContent, 4));
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0].number, 1u);
  EXPECT_EQ(end[0].bits, 1u);
}
