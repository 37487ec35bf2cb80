#pragma once
// Splits a process's output stream into lines on \n, \r\n and a lone \r. A line ended by a lone
// \r is "transient": progress bars redraw it, so the next line replaces it in the log.
// A line longer than kMaxLineBytes keeps its first kMaxLineBytes (cut at a UTF-8 character's
// start) and counts the rest in cutBytes: a runner writing hundreds of megabytes without a newline
// costs the app at most one capped line of memory, never the whole stream.
#include <QByteArray>
#include <QString>
#include <vector>

namespace sinter::gui {

struct OutputLine {
  QString text;
  bool transient = false;
  qint64 cutBytes = 0;  // bytes of this line dropped after the first kMaxLineBytes
};

class LineSplitter {
 public:
  static constexpr int kMaxLineBytes = 64 * 1024;

  // Returns the complete lines in `chunk` (with what was buffered before it).
  std::vector<OutputLine> feed(const QByteArray& chunk);
  // The unterminated rest, at the end of the stream.
  std::vector<OutputLine> finish();
  // What is held for the line not ended yet: never more than kMaxLineBytes.
  int bufferedBytes() const { return static_cast<int>(pending_.size()); }

 private:
  void keep(const char* data, qint64 size);
  OutputLine take(bool transient);

  QByteArray pending_;
  qint64 pendingCut_ = 0;   // bytes of the pending line past the cap
  bool pendingCr_ = false;  // pending_ ended in \r at the end of a chunk: a \n may follow
};

}  // namespace sinter::gui
