#pragma once
// The run's log: bounded, batched (a flood of lines costs one repaint per tick, and is shown in
// slices of kFlushSliceChars so that no tick stalls the window), follows the end
// unless the user scrolled up; find, copy and save to file. Bounded twice: by lines (20000) and by
// characters (kMaxChars, dropping the oldest lines), and a line longer than kMaxLineChars is cut
// to its start and its end before it reaches the text view (a line of megabytes would freeze its
// layout for seconds).
#include <QStringList>
#include <QTimer>
#include <QWidget>

class QLineEdit;
class QPlainTextEdit;

namespace sinter::gui {

class LogView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxLineChars = 1024;
  static constexpr int kTailChars = 256;  // of a cut line, its end is shown too
  static constexpr int kFlushMs = 50;
  static constexpr qint64 kFlushSliceChars = 64 * 1024;  // shown per turn of the event loop
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
  void showPending(qint64 maxChars);      // the oldest queued lines, up to maxChars of them
  void dropOldestPending();               // beyond the line and character limits
  void dropOldestBeyondCharacterLimit();  // of the text view
  void dropOldestShownLines(int lines);   // of the text view, in one removal

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
