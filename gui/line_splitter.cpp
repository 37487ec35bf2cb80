#include "line_splitter.h"

#include <algorithm>
#include <cstring>

namespace sinter::gui {

namespace {
// The length of `text` cut back to the start of a UTF-8 character, so a capped line ends in whole
// characters (a cut continuation byte would show as a replacement character).
int wholeCharacters(const QByteArray& text) {
  int end = static_cast<int>(text.size());
  int back = 0;
  while (end > 0 && back < 4 && (static_cast<unsigned char>(text[end - 1]) & 0xC0) == 0x80) --end, ++back;
  if (end == 0) return static_cast<int>(text.size());
  const unsigned char lead = static_cast<unsigned char>(text[end - 1]);
  const int need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return need == back + 1 ? static_cast<int>(text.size()) : end - 1;
}
}  // namespace

void LineSplitter::keep(const char* data, qint64 size) {
  const qint64 room = std::max<qint64>(0, kMaxLineBytes - pending_.size());
  const qint64 kept = std::min(room, size);
  pending_.append(data, kept);
  pendingCut_ += size - kept;
}

OutputLine LineSplitter::take(bool transient) {
  OutputLine line;
  line.transient = transient;
  line.cutBytes = pendingCut_;
  if (pendingCut_ > 0) {
    const int whole = wholeCharacters(pending_);
    line.cutBytes += pending_.size() - whole;
    pending_.truncate(whole);
  }
  line.text = QString::fromUtf8(pending_);
  pending_.clear();
  pendingCut_ = 0;
  return line;
}

std::vector<OutputLine> LineSplitter::feed(const QByteArray& chunk) {
  std::vector<OutputLine> lines;
  const char* data = chunk.constData();
  const qint64 size = chunk.size();
  qint64 i = 0;
  if (pendingCr_) {
    // The previous chunk ended in \r: it was \r\n split across reads, or a lone \r.
    pendingCr_ = false;
    const bool crlf = size > 0 && data[0] == '\n';
    lines.push_back(take(!crlf));
    if (crlf) i = 1;
  }
  while (i < size) {
    // The next line end; memchr-speed scanning matters for a flood of megabytes without one.
    const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', size - i));
    const char* cr = static_cast<const char*>(std::memchr(data + i, '\r', (nl ? nl - data : size) - i));
    const char* end = cr ? cr : nl;
    if (!end) {
      keep(data + i, size - i);
      break;
    }
    const qint64 e = end - data;
    keep(data + i, e - i);
    i = e + 1;
    if (*end == '\r') {
      if (i == size) {
        pendingCr_ = true;  // decided by the next chunk
        break;
      }
      if (data[i] == '\n') {
        ++i;
        lines.push_back(take(false));
      } else {
        lines.push_back(take(true));
      }
    } else {
      lines.push_back(take(false));
    }
  }
  return lines;
}

std::vector<OutputLine> LineSplitter::finish() {
  std::vector<OutputLine> lines;
  if (!pending_.isEmpty() || pendingCut_ > 0 || pendingCr_) lines.push_back(take(false));
  pendingCr_ = false;
  return lines;
}

}  // namespace sinter::gui
