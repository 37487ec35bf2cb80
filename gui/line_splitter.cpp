#include "line_splitter.h"

namespace sinter::gui {

std::vector<OutputLine> LineSplitter::feed(const QByteArray& chunk) {
  std::vector<OutputLine> lines;
  int i = 0;
  if (pendingCr_) {
    // The previous chunk ended in \r: it was \r\n split across reads, or a lone \r.
    pendingCr_ = false;
    const bool crlf = !chunk.isEmpty() && chunk[0] == '\n';
    lines.push_back({QString::fromUtf8(pending_), !crlf});
    pending_.clear();
    if (crlf) i = 1;
  }
  int start = i;
  for (; i < chunk.size(); ++i) {
    const char c = chunk[i];
    if (c != '\n' && c != '\r') continue;
    pending_.append(chunk.constData() + start, i - start);
    start = i + 1;
    if (c == '\r' && i + 1 == chunk.size()) {
      pendingCr_ = true;  // decided by the next chunk
      return lines;
    }
    bool transient = false;
    if (c == '\r') {
      if (chunk[i + 1] == '\n') {
        ++i;
        start = i + 1;
      } else {
        transient = true;
      }
    }
    lines.push_back({QString::fromUtf8(pending_), transient});
    pending_.clear();
  }
  pending_.append(chunk.constData() + start, chunk.size() - start);
  return lines;
}

std::vector<OutputLine> LineSplitter::finish() {
  std::vector<OutputLine> lines;
  if (!pending_.isEmpty() || pendingCr_) lines.push_back({QString::fromUtf8(pending_), false});
  pending_.clear();
  pendingCr_ = false;
  return lines;
}

}  // namespace sinter::gui
