#pragma once
// The run's log: bounded, batched (a flood of lines costs one repaint per tick), follows the end
// unless the user scrolled up; find, copy and save to file. Bounded twice: by lines (20000) and by
// characters (kMaxChars, dropping the oldest lines), and each line is cut at kMaxLineChars before
// it reaches the text view (a line of megabytes would freeze its layout for seconds).
#include <QStringList>
#include <QTimer>
#include <QWidget>

class QLineEdit;
class QPlainTextEdit;

namespace sinter::gui {

class LogView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxLineChars = 4096;
  static constexpr qint64 kMaxChars = 4'000'000;

  explicit LogView(QWidget* parent = nullptr);
  // Queues a line; a transient line (a progress bar redraw) is replaced by the next line.
  void appendLine(const QString& text, bool transient = false);
  void clear();
  void flush();  // shows what is queued now (also done by a timer)
  void setMaximumLines(int lines);
  void setMaximumCharacters(qint64 chars) { maxChars_ = chars; }
  int lineCount() const;
  qint64 characterCount() const;  // what the view holds, line ends included
  QString text() const;
  QPlainTextEdit* textEdit() const { return edit_; }
  bool find(const QString& text, bool backwards = false);
  bool saveTo(const QString& path, QString* error);

 private:
  void copy();
  void saveAs();
  void dropOldestPending();               // beyond the line and character limits
  void dropOldestBeyondCharacterLimit();  // of the text view

  QPlainTextEdit* edit_;
  QLineEdit* findEdit_;
  QTimer flushTimer_;
  QStringList pending_;
  qint64 pendingChars_ = 0;
  bool pendingLastTransient_ = false;
  bool shownLastTransient_ = false;
  int maxLines_ = 20000;
  qint64 maxChars_ = kMaxChars;
};

}  // namespace sinter::gui
