#pragma once
// The run's log: bounded, batched (a flood of lines costs one repaint per tick), follows the end
// unless the user scrolled up; find, copy and save to file.
#include <QStringList>
#include <QTimer>
#include <QWidget>

class QLineEdit;
class QPlainTextEdit;

namespace sinter::gui {

class LogView : public QWidget {
  Q_OBJECT
 public:
  explicit LogView(QWidget* parent = nullptr);
  // Queues a line; a transient line (a progress bar redraw) is replaced by the next line.
  void appendLine(const QString& text, bool transient = false);
  void clear();
  void flush();  // shows what is queued now (also done by a timer)
  void setMaximumLines(int lines);
  int lineCount() const;
  QString text() const;
  QPlainTextEdit* textEdit() const { return edit_; }
  bool find(const QString& text, bool backwards = false);
  bool saveTo(const QString& path, QString* error);

 private:
  void copy();
  void saveAs();

  QPlainTextEdit* edit_;
  QLineEdit* findEdit_;
  QTimer flushTimer_;
  QStringList pending_;
  bool pendingLastTransient_ = false;
  bool shownLastTransient_ = false;
  int maxLines_ = 20000;
};

}  // namespace sinter::gui
