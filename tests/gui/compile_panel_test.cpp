// The Torch Compile Settings panel: shown exactly for SDXL and FLUX on every tab, its controls
// follow the compile switch, its text explains the settings; family detection from a checkpoint.
#include <QGroupBox>
#include <QLabel>
#include <QTemporaryDir>
#include <QtTest>
#include <utility>
#include <vector>

#include "collapsible_section.h"
#include "compile_settings_panel.h"
#include "core/registry.h"
#include "gui_test_support.h"

using namespace sinter;
using namespace sinter::gui;

class CompilePanelTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void visibleExactlyForSdxlAndFlux_data() {
    QTest::addColumn<int>("tab");
    QTest::addColumn<QString>("family");
    QTest::addColumn<bool>("visible");
    for (Tab tab : allTabs())
      for (const char* family : {"auto", "sdxl", "flux", "sd15", "sd2", "sd3"}) {
        if (const auto f = familyFromString(family); f && !tabTrainsFamily(tab, *f)) continue;  // not offered on the tab
        const bool visible = std::string(family) == "sdxl" || std::string(family) == "flux";
        QTest::newRow((std::string(toString(tab)) + "/" + family).c_str())
            << static_cast<int>(tab) << QString(family) << visible;
      }
  }
  void visibleExactlyForSdxlAndFlux() {
    QFETCH(int, tab);
    QFETCH(QString, family);
    QFETCH(bool, visible);
    OptionForm form(static_cast<Tab>(tab));
    test::setOption(&form, "model_family", family.toStdString());
    QCOMPARE(!form.compilePanel()->isHidden(), visible);
    // The panel lives inside Advanced, on every tab.
    QVERIFY(form.advancedSection()->isAncestorOf(form.compilePanel()));
    // Every compile-section option has its control in the panel, none elsewhere.
    for (const OptionSpec& spec : optionRegistry()) {
      if (spec.section != Section::Compile || !spec.appliesToTab(static_cast<Tab>(tab))) continue;
      QVERIFY2(form.editor(spec.key), spec.key);
      QVERIFY(form.compilePanel()->isAncestorOf(form.editor(spec.key)));
    }
  }

  // vram_budget_gb: the panel shows the memory plan the runner's dry run prints (for the
  // full-size model), and what it chose changes with the budget.
  void showsTheMemoryPlanForABudget() {
    OptionForm form(Tab::LoRA);
    test::setOption(&form, "model_family", std::string("flux"));
    QVERIFY(!form.compilePanel()->infoHtml().contains(QStringLiteral("vram budget")));
    for (const char* key : {"cache_latents", "cache_text_encoder_outputs", "network_train_unet_only"}) test::setOption(&form, key, true);
    test::setOption(&form, "mixed_precision", std::string("bf16"));
    test::setOption(&form, "vram_budget_gb", 80.0);
    const QString roomy = form.compilePanel()->infoHtml();
    QVERIFY2(roomy.contains(QStringLiteral("vram budget 80.0 GiB")), qPrintable(roomy));
    QVERIFY2(roomy.contains(QStringLiteral("gradient_checkpointing off, cpu_offload")), qPrintable(roomy));
    test::setOption(&form, "vram_budget_gb", 10.0);
    const QString tight = form.compilePanel()->infoHtml();
    QVERIFY2(tight.contains(QStringLiteral("gradient_checkpointing on")), qPrintable(tight));
    test::setOption(&form, "vram_budget_gb", 0.5);
    QVERIFY2(form.compilePanel()->infoHtml().contains(QStringLiteral("smallest reachable")), qPrintable(form.compilePanel()->infoHtml()));
  }

  void controlsFollowTheCompileSwitch() {
    OptionForm form(Tab::LoRA);
    test::setOption(&form, "model_family", std::string("sdxl"));
    for (bool on : {false, true, false}) {
      test::setOption(&form, "compile", on);
      for (const OptionSpec& spec : optionRegistry()) {
        if (spec.section != Section::Compile || std::string(spec.key) == "compile") continue;
        const bool dependent = std::string(spec.key).rfind("compile_", 0) == 0;
        QCOMPARE(form.editor(spec.key)->isEnabled(), dependent ? on : true);
      }
    }
  }

  // What the settings turn on is the runner's plan (gui_real_runner_test); the form's own notes say
  // what the rest of the form rules out.
  void infoTextNamesSettingsTheFormRulesOut() {
    OptionForm form(Tab::LoRA);
    test::setOption(&form, "model_family", std::string("flux"));
    test::setOption(&form, "compile", true);
    test::setOption(&form, "compile_mode", std::string("reduce-overhead"));
    QVERIFY(!form.compilePanel()->infoHtml().contains("refused"));
    test::setOption(&form, "compile_fullgraph", true);
    test::setOption(&form, "split_attn", true);
    QVERIFY(form.compilePanel()->infoHtml().contains("Fullgraph is refused with split attention"));
    test::setOption(&form, "blocks_to_swap", 8LL);
    QVERIFY(form.compilePanel()->infoHtml().contains("swapped blocks' weights stay out of capture"));
  }

  void familyDetectedFromTheCheckpointHeader_data() {
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<QString>("family");
    QTest::addColumn<bool>("compileShown");
    QTest::newRow("sdxl") << "conditioner.embedders.0.transformer.text_model.embeddings.position_ids" << "SDXL" << true;
    QTest::newRow("flux") << "double_blocks.0.img_attn.qkv.weight" << "FLUX.1" << true;
    QTest::newRow("sd15") << "model.diffusion_model.input_blocks.0.0.weight" << "SD 1.x" << false;
    QTest::newRow("sd3") << "model.diffusion_model.joint_blocks.0.x_block.attn.qkv.weight" << "SD 3.x" << false;
  }
  void familyDetectedFromTheCheckpointHeader() {
    QFETCH(QString, tensor);
    QFETCH(QString, family);
    QFETCH(bool, compileShown);
    QTemporaryDir dir;
    const QString path = dir.filePath("model.safetensors");
    QVERIFY(test::writeTinySafetensors(path, {tensor.toStdString(), "first_stage_model.encoder.conv_in.weight"}));
    OptionForm form(Tab::DreamBooth);
    test::setOption(&form, "pretrained_model_name_or_path", path.toStdString());
    QVERIFY(form.detectedFamily());
    QCOMPARE(familyDisplayName(*form.detectedFamily()), family);
    QCOMPARE(!form.compilePanel()->isHidden(), compileShown);
    auto* note = form.findChild<QLabel*>("detectedFamily");
    QVERIFY(note && note->text().contains(family));
    // FLUX asks for its autoencoder and text encoders, SD 3.x for its three text encoders; other
    // families do not show those rows.
    const bool flux = family == "FLUX.1", sd3 = family == "SD 3.x";
    for (const auto& [key, shown] : std::vector<std::pair<const char*, bool>>{
             {"ae", flux}, {"clip_l", flux || sd3}, {"t5xxl", flux || sd3}, {"clip_g", sd3}, {"vae", !flux}}) {
      OptionEditor* e = form.editor(key);
      QVERIFY(e);
      QVERIFY2(!e->isHidden() == shown, key);
    }
    // An explicit choice wins over detection.
    test::setOption(&form, "model_family", std::string("sd15"));
    QCOMPARE(form.effectiveFamily(), std::optional<Family>(Family::SD15));
    QVERIFY(form.compilePanel()->isHidden());
  }

  // SD 3.x's own options are a group of their own, shown for SD 3.x only; the options it shares with
  // FLUX.1 (weighting_scheme, ...) show for both.
  void sd3OptionsShowForSd3Only() {
    OptionForm form(Tab::LoRA);
    auto sd3Group = [&]() -> QGroupBox* {
      for (QGroupBox* box : form.findChildren<QGroupBox*>())
        if (box->title() == QStringLiteral("SD 3.x")) return box;
      return nullptr;
    };
    QVERIFY(sd3Group());
    for (const char* family : {"sd3", "flux", "sdxl"}) {
      test::setOption(&form, "model_family", std::string(family));
      const bool sd3 = std::string(family) == "sd3", flux = std::string(family) == "flux";
      QCOMPARE(!sd3Group()->isHidden(), sd3);
      for (const char* key : {"training_shift", "clip_l_dropout_rate", "clip_g_dropout_rate", "t5_dropout_rate", "apply_lg_attn_mask",
                              "enable_scaled_pos_embed", "pos_emb_random_crop_rate"}) {
        QVERIFY2(form.editor(key) && sd3Group()->isAncestorOf(form.editor(key)), key);
        QVERIFY2(!form.editor(key)->isHidden() == sd3, key);
      }
      for (const char* key : {"weighting_scheme", "logit_mean", "t5xxl_max_token_length", "apply_t5_attn_mask", "t5_tokenizer"})
        QVERIFY2(!form.editor(key)->isHidden() == (sd3 || flux), key);
      QVERIFY2(!form.editor("ip_noise_gamma")->isHidden() == !sd3, "ip_noise_gamma");
      QCOMPARE(form.compilePanel()->isHidden(), sd3);
    }
  }

  void unreadableCheckpointSaysWhy() {
    QTemporaryDir dir;
    const QString path = dir.filePath("broken.safetensors");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("nope");
    f.close();
    OptionForm form(Tab::LoRA);
    test::setOption(&form, "pretrained_model_name_or_path", path.toStdString());
    QVERIFY(!form.detectedFamily());
    QVERIFY(form.findChild<QLabel*>("detectedFamily")->text().contains("Could not read"));
    QVERIFY(form.compilePanel()->isHidden());
  }
};

QTEST_MAIN(CompilePanelTest)
#include "compile_panel_test.moc"
