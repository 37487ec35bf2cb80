#include "log_view.h"

#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSaveFile>
#include <QScrollBar>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

namespace sinter::gui {

LogView::LogView(QWidget* parent) : QWidget(parent) {
  edit_ = new QPlainTextEdit(this);
  edit_->setReadOnly(true);
  edit_->setUndoRedoEnabled(false);
  edit_->setLineWrapMode(QPlainTextEdit::NoWrap);
  edit_->setMaximumBlockCount(maxLines_);
  edit_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  edit_->setObjectName(QStringLiteral("logText"));

  findEdit_ = new QLineEdit(this);
  findEdit_->setPlaceholderText(tr("Find in log"));
  findEdit_->setClearButtonEnabled(true);
  auto* next = new QToolButton(this);
  next->setText(tr("Next"));
  auto* previous = new QToolButton(this);
  previous->setText(tr("Previous"));
  auto* copyButton = new QToolButton(this);
  copyButton->setText(tr("Copy"));
  copyButton->setToolTip(tr("Copy the selection, or the whole log when nothing is selected"));
  auto* saveButton = new QToolButton(this);
  saveButton->setText(tr("Save…"));
  saveButton->setToolTip(tr("Save the log to a file"));

  auto* bar = new QHBoxLayout;
  bar->addWidget(findEdit_, 1);
  bar->addWidget(previous);
  bar->addWidget(next);
  bar->addSpacing(12);
  bar->addWidget(copyButton);
  bar->addWidget(saveButton);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(edit_, 1);

  connect(findEdit_, &QLineEdit::returnPressed, this, [this] { find(findEdit_->text()); });
  connect(next, &QToolButton::clicked, this, [this] { find(findEdit_->text()); });
  connect(previous, &QToolButton::clicked, this, [this] { find(findEdit_->text(), true); });
  connect(copyButton, &QToolButton::clicked, this, &LogView::copy);
  connect(saveButton, &QToolButton::clicked, this, &LogView::saveAs);

  flushTimer_.setSingleShot(true);
  connect(&flushTimer_, &QTimer::timeout, this, [this] {
    // A flood is shown in slices, the event loop running between them.
    showPending(kFlushSliceChars);
    if (!pending_.isEmpty()) flushTimer_.start(0);
  });
}

void LogView::appendLine(const QString& text, bool transient) {
  if (pendingLastTransient_ && !pending_.isEmpty()) {
    pendingChars_ -= pending_.last().size() + 1;
    pending_.removeLast();
  }
  if (text.size() > kMaxLineChars) {
    // The start and the end stay (a long line's end often says what went wrong); whole characters.
    int head = kMaxLineChars - kTailChars;
    int tail = kTailChars;
    if (text.at(head - 1).isHighSurrogate()) --head;
    if (text.at(text.size() - tail).isLowSurrogate()) --tail;
    const int hidden = static_cast<int>(text.size()) - head - tail;
    pending_.append(text.left(head) + tr(" [… %n characters not shown …] ", nullptr, hidden) + text.right(tail));
  } else {
    pending_.append(text);
  }
  pendingChars_ += pending_.last().size() + 1;
  pendingLastTransient_ = transient;
  // More than the view keeps would be trimmed right away: drop it before it costs anything.
  if (pending_.size() > maxLines_ * 2 || pendingChars_ > maxChars_ * 2) dropOldestPending();
  if (!flushTimer_.isActive()) flushTimer_.start(kFlushMs);
}

void LogView::dropOldestPending() {
  int first = std::max(0, static_cast<int>(pending_.size()) - maxLines_);
  qint64 chars = 0;
  for (int i = 0; i < first; ++i) chars += pending_.at(i).size() + 1;
  while (first < pending_.size() - 1 && pendingChars_ - chars > maxChars_) chars += pending_.at(first++).size() + 1;
  pending_.erase(pending_.begin(), pending_.begin() + first);
  pendingChars_ -= chars;
}

void LogView::dropOldestBeyondCharacterLimit() {
  QTextDocument* document = edit_->document();
  const qint64 excess = document->characterCount() - maxChars_;
  if (excess <= 0 || document->blockCount() <= 1) return;
  // Whole lines from the top, as maximumBlockCount drops them, until the rest fits.
  QTextBlock last = document->firstBlock();
  qint64 dropped = last.length();
  while (dropped < excess && last.next().isValid() && last.next() != document->lastBlock()) {
    last = last.next();
    dropped += last.length();
  }
  QTextCursor cursor(document);
  cursor.movePosition(QTextCursor::Start);
  cursor.setPosition(last.next().position(), QTextCursor::KeepAnchor);
  cursor.removeSelectedText();
}

void LogView::dropOldestShownLines(int lines) {
  QTextDocument* document = edit_->document();
  if (lines <= 0 || document->isEmpty()) return;
  if (lines >= document->blockCount()) {
    edit_->clear();
    return;
  }
  QTextCursor cursor(document);
  cursor.movePosition(QTextCursor::Start);
  cursor.setPosition(document->findBlockByNumber(lines).position(), QTextCursor::KeepAnchor);
  cursor.removeSelectedText();
}

void LogView::flush() {
  flushTimer_.stop();
  showPending(std::numeric_limits<qint64>::max());
}

void LogView::showPending(qint64 maxChars) {
  if (pending_.isEmpty()) return;
  QScrollBar* scroll = edit_->verticalScrollBar();
  const bool following = scroll->value() >= scroll->maximum() - 1;
  dropOldestPending();
  // The oldest lines up to maxChars (at least one): laying out text costs time per character.
  int count = 0;
  qint64 chars = 0;
  while (count < pending_.size() && (count == 0 || chars + pending_.at(count).size() <= maxChars))
    chars += pending_.at(count++).size() + 1;
  const bool all = count == pending_.size();

  if (shownLastTransient_ && edit_->document()->blockCount() == 1) {
    edit_->clear();
  } else if (shownLastTransient_) {
    // The last line shown was a progress redraw: the new text overwrites it, as on a terminal.
    QTextCursor cursor(edit_->document());
    cursor.movePosition(QTextCursor::End);
    cursor.movePosition(QTextCursor::StartOfBlock, QTextCursor::KeepAnchor);
    cursor.movePosition(QTextCursor::PreviousCharacter, QTextCursor::KeepAnchor);
    cursor.removeSelectedText();
  }
  // The lines the maximum block count would drop go first, in one removal: QPlainTextEdit trims
  // them one block at a time after the append (20000 lines of a flood onto a full view: 160 ms,
  // against 30 ms this way).
  const int shownLines = edit_->document()->isEmpty() ? 0 : edit_->document()->blockCount();
  dropOldestShownLines(shownLines + count - maxLines_);
  // appendPlainText is QPlainTextEdit's fast path under a maximum block count.
  edit_->appendPlainText(all ? pending_.join(QLatin1Char('\n')) : pending_.mid(0, count).join(QLatin1Char('\n')));
  // Only the last pending line can be a progress redraw.
  shownLastTransient_ = all && pendingLastTransient_;
  pending_.erase(pending_.begin(), pending_.begin() + count);
  pendingChars_ -= chars;
  if (all) pendingLastTransient_ = false;
  dropOldestBeyondCharacterLimit();
  if (following) scroll->setValue(scroll->maximum());
}

void LogView::clear() {
  pending_.clear();
  pendingChars_ = 0;
  pendingLastTransient_ = shownLastTransient_ = false;
  edit_->clear();
}

void LogView::setMaximumLines(int lines) {
  maxLines_ = lines;
  edit_->setMaximumBlockCount(lines);
}

int LogView::lineCount() const { return edit_->document()->isEmpty() ? 0 : edit_->document()->blockCount(); }

// QTextDocument counts one more character than its text holds (the document's end).
qint64 LogView::characterCount() const { return edit_->document()->isEmpty() ? 0 : edit_->document()->characterCount() - 1; }

QString LogView::text() const { return edit_->toPlainText(); }

bool LogView::find(const QString& text, bool backwards) {
  if (text.isEmpty()) return false;
  flush();
  const QTextDocument::FindFlags flags = backwards ? QTextDocument::FindBackward : QTextDocument::FindFlags();
  if (edit_->find(text, flags)) return true;
  // Wrap around once.
  QTextCursor cursor = edit_->textCursor();
  cursor.movePosition(backwards ? QTextCursor::End : QTextCursor::Start);
  edit_->setTextCursor(cursor);
  return edit_->find(text, flags);
}

void LogView::copy() {
  flush();
  const QString selected = edit_->textCursor().selectedText().replace(QChar::ParagraphSeparator, QLatin1Char('\n'));
  QApplication::clipboard()->setText(selected.isEmpty() ? edit_->toPlainText() : selected);
}

bool LogView::saveTo(const QString& path, QString* error) {
  flush();
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(edit_->toPlainText().toUtf8()) < 0 ||
      !file.commit()) {
    if (error) *error = tr("Could not write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

void LogView::saveAs() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save log"), QStringLiteral("sinter-run.log"),
                                                    tr("Log files (*.log *.txt);;All files (*)"));
  if (path.isEmpty()) return;
  QString error;
  if (!saveTo(path, &error)) QMessageBox::warning(this, tr("Save log"), error);
}

}  // namespace sinter::gui
