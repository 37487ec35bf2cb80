#pragma once
// The Tools tab: sd-scripts' LoRA tools as the runner has them (resize, merge, SVD merge, extract,
// convert, check), their flags as a form built from core's tool table, the runner started with the
// argument list, its log streamed as a run's, and a result: the files' sizes and what
// check_lora_weights says of the LoRA written. "Check a LoRA file..." shows that for any file.
#include <QMap>
#include <QString>
#include <QWidget>
#include <functional>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace sinter {
struct LoraToolSpec;
}

namespace sinter::gui {

class LogView;
class RunController;

class ToolsTab : public QWidget {
  Q_OBJECT
 public:
  explicit ToolsTab(QWidget* parent = nullptr);

  // For tests and the screenshot tool: the chosen tool (by name), a flag's text (a list as the
  // form shows it: files separated by ';', numbers by spaces; a switch "1" or ""), running.
  void selectTool(const QString& name);
  QString selectedTool() const;
  void setFlagValue(const QString& flag, const QString& text);
  QString flagValue(const QString& flag) const;
  // The runner's arguments for the form as it is, or an empty list with *error set (a required
  // flag left empty).
  QStringList arguments(QString* error) const;
  void startTool();
  void checkFile(const QString& path);  // check_lora_weights on `path`, into the result
  bool isRunning() const;
  QString statusText() const;
  QString resultText() const;
  LogView* log() const { return log_; }

 signals:
  void toolFinished(int exitCode);
  void checkFinished(int exitCode);
  void runningChanged(bool running);

 private:
  struct FlagEditor {
    std::function<QString()> get;
    std::function<void(const QString&)> set;
  };
  const LoraToolSpec& tool() const;
  void rebuildForm();
  QWidget* fileEditor(const QString& flag, bool save, bool several, FlagEditor* editor);
  void onToolFinished(int exitCode, bool crashed);
  // The file the tool writes (its first output flag's value), and whether it is a LoRA.
  QString outputFile(bool* isLora) const;
  void setRunning(bool running);

  QComboBox* toolBox_;
  QLabel* usage_;
  QCheckBox* showAll_;
  QWidget* formHost_;
  QFormLayout* form_ = nullptr;
  QMap<QString, FlagEditor> editors_;
  QMap<QString, QString> values_;  // what was typed, kept across rebuilds of the form
  QPushButton* runButton_;
  QPushButton* checkButton_;
  QLabel* status_;
  QPlainTextEdit* result_;
  LogView* log_;
  RunController* run_;
  RunController* check_;
  QStringList checkLines_;
};

}  // namespace sinter::gui
