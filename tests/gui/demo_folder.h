#pragma once
// The tiny demo's inputs for the GUI tests that train with the real runner: a temporary folder
// made the current one, holding what `.ci/demo` makes under demo-output/ (the preset's paths are
// relative to the folder both programs start in) and the preset's sample prompts.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include "gui_test_support.h"

namespace sinter::gui::test {

// The demo's inputs, made by `runner` under demo-output/ in the current folder, and the preset's
// sample prompts where its relative path looks for them. Empty, or what failed.
inline QString makeDemoInputs(const QString& runner) {
  const QList<QStringList> setup = {
      {"--init_checkpoint", "demo-output/tiny_sdxl.safetensors", "--model_family", "sdxl", "--model_size", "tiny", "--seed", "1"},
      {"--init_dataset", "demo-output/images", "--seed", "1"},
      {"--init_tokenizer", "demo-output/tokenizer"}};
  for (const QStringList& args : setup) {
    QProcess init;
    init.start(runner, args);
    if (!init.waitForFinished(120000) || init.exitCode() != 0)
      return "the runner could not make the demo inputs: " + init.readAllStandardError().left(300);
  }
  QDir().mkpath(QStringLiteral("presets"));
  if (!QFile::copy(QStringLiteral(SINTER_PRESETS_DIR "/demo_sample_prompts.txt"), QStringLiteral("presets/demo_sample_prompts.txt")))
    return QStringLiteral("cannot copy the sample prompts");
  return {};
}

#ifdef SINTER_RUNNER_BINARY
// A temporary folder made the current one, holding the demo's inputs; the previous current folder
// is back when it goes.
struct DemoFolder {
  QTemporaryDir dir;
  QString previous = QDir::currentPath();
  QString failure;  // what could not be made, or empty
  DemoFolder() {
    QDir::setCurrent(dir.path());
    failure = makeDemoInputs(realRunner());
  }
  ~DemoFolder() { QDir::setCurrent(previous); }
  QString filePath(const QString& name) const { return dir.filePath(name); }
};
#endif

}  // namespace sinter::gui::test
