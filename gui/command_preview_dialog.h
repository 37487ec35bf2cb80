#pragma once
// Print command: the exact runner command a run uses, the TOML file it reads, and the same run as
// command-line flags only; with a copy button.
#include <QDialog>

class QPlainTextEdit;

namespace sinter::gui {

struct CommandPreview {
  QString program;
  QStringList arguments;          // exactly what Start passes to QProcess
  QString tomlPath;
  QString toml;
  QStringList equivalentArguments;  // core's buildArgv for the same config
  // The same run as sd-scripts is started: accelerate's flags, the script, --config_file TOML
  // (`accelerate launch` takes them, and sinter-runner too); empty where no script's name gives
  // this family and training type.
  QStringList sdScriptsArguments;
  QString text() const;           // what the dialog shows and copies
};

class CommandPreviewDialog : public QDialog {
  Q_OBJECT
 public:
  CommandPreviewDialog(const CommandPreview& preview, QWidget* parent = nullptr);
  QString shownText() const;

 private:
  QPlainTextEdit* text_;
};

}  // namespace sinter::gui
