#pragma once
// Splits a process's output stream into lines on \n, \r\n and a lone \r. A line ended by a lone
// \r is "transient": progress bars redraw it, so the next line replaces it in the log.
#include <QByteArray>
#include <QString>
#include <vector>

namespace sinter::gui {

struct OutputLine {
  QString text;
  bool transient = false;
};

class LineSplitter {
 public:
  // Returns the complete lines in `chunk` (with what was buffered before it).
  std::vector<OutputLine> feed(const QByteArray& chunk);
  // The unterminated rest, at the end of the stream.
  std::vector<OutputLine> finish();

 private:
  QByteArray pending_;
  bool pendingCr_ = false;  // pending_ ended in \r at the end of a chunk: a \n may follow
};

}  // namespace sinter::gui
