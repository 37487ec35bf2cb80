// Every registry option survives widgets -> TOML -> widgets, for each tab and model family.
#include <QLineEdit>
#include <QtTest>

#include "core/registry.h"
#include "core/toml_config.h"
#include "gui_test_support.h"

using namespace sinter;
using namespace sinter::gui;

namespace {

// A value other than the default that the registry accepts, or monostate when none was found.
Value nonDefaultValue(const OptionSpec& spec) {
  std::vector<Value> candidates;
  switch (spec.type) {
    case OptionType::Bool: candidates = {!asBool(spec.defaultValue)}; break;
    case OptionType::Int:
      for (const std::string& c : spec.choices) candidates.push_back(std::stoll(c));
      if (spec.minValue) candidates.push_back(static_cast<long long>(*spec.minValue) + 1);
      candidates.push_back(3LL);
      candidates.push_back(7LL);
      break;
    case OptionType::Float:
      if (spec.minValue && spec.maxValue) candidates.push_back((*spec.minValue + *spec.maxValue) / 4);
      candidates.push_back(0.375);
      candidates.push_back(2.5);
      break;
    case OptionType::Enum:
      for (const std::string& c : spec.choices) candidates.push_back(c);
      break;
    case OptionType::String:
      for (const std::string& s : spec.suggestions) candidates.push_back(s);
      candidates.push_back(std::string("512,768"));
      candidates.push_back(std::string("text with spaces ✓"));
      break;
    case OptionType::Path: candidates = {std::string("/data/some folder/") + spec.key}; break;
    case OptionType::List: candidates = {StringList{"a=1", "two words", "b=0.5"}}; break;
  }
  for (const Value& v : candidates) {
    Value stored;
    if (v == spec.defaultValue || spec.isUnsetValue(v)) continue;
    if (checkValue(spec, v, stored).empty() && !(stored == spec.defaultValue)) return stored;
  }
  // Only one value is allowed (save_model_as): the default must survive too.
  return spec.defaultValue;
}

}  // namespace

class OptionRoundTripTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void everyOptionSurvivesWidgetsTomlWidgets_data() {
    QTest::addColumn<int>("tab");
    QTest::addColumn<int>("family");
    for (Tab tab : allTabs())
      for (Family family : allFamilies())
        if (tabTrainsFamily(tab, family))  // the Textual Inversion tab offers SD 1.x/2.x and SDXL only
          QTest::newRow((std::string(toString(tab)) + "/" + toString(family)).c_str())
              << static_cast<int>(tab) << static_cast<int>(family);
  }
  void everyOptionSurvivesWidgetsTomlWidgets() {
    QFETCH(int, tab);
    QFETCH(int, family);
    const Tab t = static_cast<Tab>(tab);
    const Family f = static_cast<Family>(family);
    OptionForm form(t);
    test::setOption(&form, "model_family", std::string(toString(f)));
    std::map<std::string, Value> expected;
    int covered = 0;
    for (const OptionSpec& spec : optionRegistry()) {
      const std::string key = spec.key;
      if (!spec.appliesToTab(t) || !spec.appliesToFamily(f) || key == "training_type" || key == "model_family") continue;
      if (isCompileKey(key) && f != Family::SDXL && f != Family::FLUX) continue;
      QVERIFY2(form.editor(key), ("no widget for " + key).c_str());
      const Value v = nonDefaultValue(spec);
      QVERIFY2(!isUnset(v), ("no test value for " + key).c_str());
      test::setOption(&form, key, v);
      QVERIFY2(form.editor(key)->problem().isEmpty(), key.c_str());
      expected[key] = v;
      ++covered;
    }
    QVERIFY(covered > 20);
    const Config fromWidgets = form.config();
    const std::string toml = writeConfigToml(fromWidgets, t, f);
    const LoadResult loaded = parseConfigToml(toml, "round-trip.toml");

    OptionForm reopened(t);
    reopened.setConfig(loaded.config);
    for (const auto& [key, value] : expected) {
      const OptionSpec* spec = findOption(key);
      if (spec->secret) {
        QVERIFY2(toml.find(key) == std::string::npos, ("secret written: " + key).c_str());
        continue;
      }
      const Value back = reopened.editor(key)->value();
      const bool same = back == value || (spec->type == OptionType::Float && asDouble(back) == asDouble(value));
      QVERIFY2(same, (key + ": " + asString(value) + " came back as " + asString(back)).c_str());
    }
    QCOMPARE(reopened.effectiveFamily(), std::optional<Family>(f));
    // And the form gives back the same config it was given.
    QVERIFY(reopened.config().sameEffectiveValues(loaded.config));
  }

  void unsetValuesStayUnset() {
    OptionForm form(Tab::LoRA);
    for (const OptionSpec& spec : optionRegistry()) {
      OptionEditor* editor = form.editor(spec.key);
      if (!editor || !isUnset(spec.defaultValue)) continue;
      QVERIFY2(isUnset(editor->value()), spec.key);  // a None default shows as "not set"
    }
    const Config c = form.config();
    for (const auto& [key, value] : c.explicitValues()) QCOMPARE(QString::fromStdString(key), QString("training_type"));
  }

  // An unset clip_tokenizer is the tokenizer that ships with Sinter: its field says "bundled".
  void unsetTokenizerFieldSaysBundled() {
    OptionForm form(Tab::LoRA);
    OptionEditor* editor = form.editor("clip_tokenizer");
    QVERIFY(editor);
    auto* edit = editor->findChild<QLineEdit*>();
    QVERIFY(edit);
    QCOMPARE(edit->placeholderText(), QStringLiteral("bundled"));
    QVERIFY(isUnset(editor->value()));
  }

  void floatOptionsKeepIntegers() {
    // lr_warmup_steps = 100 is a step count in sd-scripts; it must not become 100.0.
    const OptionSpec* spec = findOption("lr_warmup_steps");
    QVERIFY(spec);
    OptionForm form(Tab::LoRA);
    form.setConfig(parseConfigToml("lr_warmup_steps = 100\n", "x.toml").config);
    QVERIFY(std::holds_alternative<long long>(form.editor("lr_warmup_steps")->value()));
    QVERIFY(writeConfigToml(form.config()).find("lr_warmup_steps = 100\n") != std::string::npos);
  }

  void integersBeyondASpinBoxSurvive() {
    // Seeds go up to 2^32-1 and step counts further: no silent clamping to 2^31-1.
    OptionForm form(Tab::LoRA);
    test::setOption(&form, "seed", 4000000000LL);
    test::setOption(&form, "max_train_steps", 10000000000LL);
    const Config back = parseConfigToml(writeConfigToml(form.config()), "x.toml").config;
    OptionForm reopened(Tab::LoRA);
    reopened.setConfig(back);
    QCOMPARE(asInt(reopened.editor("seed")->value()), 4000000000LL);
    QCOMPARE(asInt(reopened.editor("max_train_steps")->value()), 10000000000LL);
    test::setOption(&reopened, "seed", std::monostate{});
    QVERIFY(!reopened.config().has("seed"));
  }

  void outOfRangeValueIsMarkedOnTheField() {
    OptionForm form(Tab::LoRA);
    const OptionSpec* spec = findOption("caption_dropout_rate");
    QVERIFY(spec && spec->maxValue);
    test::setOption(&form, "caption_dropout_rate", 5.0);
    QVERIFY(!form.editor("caption_dropout_rate")->problem().isEmpty());
    QCOMPARE(form.fieldProblems().size(), size_t(1));
  }
};

QTEST_MAIN(OptionRoundTripTest)
#include "option_round_trip_test.moc"
