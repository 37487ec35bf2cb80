// The log view: bounded, follows the end unless scrolled up, replaces progress redraws, finds and
// saves; the line splitter handles \n, \r\n (also split across reads) and lone \r.
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_support.h"
#include "line_splitter.h"
#include "log_view.h"

using namespace sinter::gui;

class LogViewTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void splitterHandlesEveryLineEnd() {
    LineSplitter s;
    std::vector<OutputLine> lines = s.feed("a\nb\r\nc\rd\r");
    QCOMPARE(lines.size(), size_t(3));
    QCOMPARE(lines[0].text, QString("a"));
    QVERIFY(!lines[0].transient);
    QCOMPARE(lines[1].text, QString("b"));
    QVERIFY(!lines[1].transient);
    QCOMPARE(lines[2].text, QString("c"));
    QVERIFY(lines[2].transient);
    lines = s.feed("\nhalf");  // "d\r" + "\n" is one CRLF split across reads
    QCOMPARE(lines.size(), size_t(1));
    QCOMPARE(lines[0].text, QString("d"));
    QVERIFY(!lines[0].transient);
    lines = s.feed(QByteArray(" line ✓\n"));
    QCOMPARE(lines.size(), size_t(1));
    QCOMPARE(lines[0].text, QString("half line ✓"));
    QVERIFY(s.feed("tail").empty());
    lines = s.finish();
    QCOMPARE(lines.size(), size_t(1));
    QCOMPARE(lines[0].text, QString("tail"));
  }

  void boundedAndProgressRedrawsReplaced() {
    LogView view;
    view.setMaximumLines(100);
    for (int i = 0; i < 1000; ++i) view.appendLine(QString("line %1").arg(i));
    view.flush();
    QCOMPARE(view.lineCount(), 100);
    QVERIFY(view.text().endsWith("line 999"));
    view.appendLine("progress 1", true);
    view.flush();
    view.appendLine("progress 2", true);
    view.flush();
    view.appendLine("done");
    view.flush();
    // As on a terminal, text after a carriage return overwrites the line.
    QVERIFY(!view.text().contains("progress"));
    QVERIFY(view.text().endsWith("line 999\ndone"));
  }

  // A full view drops its oldest lines before new ones are laid out (one removal, not the text
  // edit's block-by-block trimming): the newest lines stay, in order, a progress redraw replaced.
  void aFullViewKeepsTheNewestLinesInOrder() {
    LogView view;
    view.setMaximumLines(100);
    QStringList all;
    const auto add = [&](int n) {
      for (int i = 0; i < n; ++i) {
        all << QString("line %1").arg(all.size());
        view.appendLine(all.back());
      }
    };
    add(100);
    view.flush();
    QCOMPARE(view.text(), all.join('\n'));
    add(30);
    view.flush();
    QCOMPARE(view.lineCount(), 100);
    QCOMPARE(view.text(), all.mid(30).join('\n'));
    view.appendLine("progress", true);
    view.flush();
    add(99);  // with the redraw replaced, exactly a view's worth of new lines
    view.flush();
    QCOMPARE(view.text(), all.mid(all.size() - 100).join('\n'));
    add(250);  // more than the view holds, at once
    view.flush();
    QCOMPARE(view.text(), all.mid(all.size() - 100).join('\n'));
  }

  void longLinesAreCutToTheirStartAndEnd() {
    LogView view;
    const QString line = "start" + QString(5000, QLatin1Char('m')) + "the end";
    view.appendLine(line);
    view.flush();
    const QString shown = view.text();
    QVERIFY(shown.startsWith("start"));
    QVERIFY(shown.endsWith("the end"));  // a long line's end often says what went wrong
    QVERIFY(shown.contains(QString(" [… %1 characters not shown …] ").arg(line.size() - LogView::kMaxLineChars)));
    QVERIFY(shown.size() < LogView::kMaxLineChars + 60);
    // A character of two UTF-16 units is never split.
    QString emoji;
    for (int i = 0; i < 1000; ++i) emoji += QString::fromUtf8("😀");
    view.clear();
    view.appendLine("x" + emoji);
    view.flush();
    QVERIFY(!view.text().contains(QChar(QChar::ReplacementCharacter)));
    const QStringList parts = view.text().split(" [… ");
    QCOMPARE(parts.size(), 2);
    QVERIFY(!parts[0].back().isHighSurrogate());
    QVERIFY(!parts[1].split(" …] ").value(1).front().isLowSurrogate());
  }

  void boundedByCharactersKeepingTheNewestLines() {
    LogView view;
    view.setMaximumCharacters(10000);
    for (int i = 0; i < 100; ++i) view.appendLine(QString("line %1 ").arg(i, 3, 10, QLatin1Char('0')) + QString(490, QLatin1Char('.')));
    view.flush();
    QVERIFY(view.characterCount() <= 10000);
    QVERIFY(view.characterCount() > 10000 - 500);
    QCOMPARE(view.characterCount(), qint64(view.text().size()));
    QVERIFY(view.text().startsWith("line 0"));  // whole lines dropped, from the top
    QVERIFY(view.text().endsWith(QString(490, QLatin1Char('.'))));
    QVERIFY(view.text().contains("line 099"));
    QVERIFY(view.text().contains("line 081"));
    QVERIFY(!view.text().contains("line 078"));
  }

  void aFloodIsShownInSlicesInOrder() {
    LogView view;
    QStringList expected;
    for (int i = 0; i < 2000; ++i) {
      expected << QString("line %1 ").arg(i) + QString(200, QLatin1Char('-'));
      view.appendLine(expected.back());
    }
    view.appendLine("progress 10%", true);
    // The timer shows it a slice at a time, the event loop running between slices.
    QTRY_VERIFY(view.text().endsWith("progress 10%"));
    QCOMPARE(view.text(), expected.join('\n') + "\nprogress 10%");
    view.appendLine("progress 20%", true);
    view.appendLine("finished");
    QTRY_VERIFY(view.text().endsWith("finished"));
    QCOMPARE(view.text(), expected.join('\n') + "\nfinished");
  }

  void followsTheEndUnlessScrolledUp() {
    LogView view;
    view.resize(600, 200);
    view.show();
    for (int i = 0; i < 500; ++i) view.appendLine(QString("line %1").arg(i));
    view.flush();
    QScrollBar* bar = view.textEdit()->verticalScrollBar();
    QCOMPARE(bar->value(), bar->maximum());
    bar->setValue(10);  // the user scrolls up to read
    for (int i = 0; i < 100; ++i) view.appendLine("more");
    view.flush();
    QCOMPARE(bar->value(), 10);
    bar->setValue(bar->maximum());  // back at the end: follows again
    view.appendLine("latest");
    view.flush();
    QCOMPARE(bar->value(), bar->maximum());
  }

  void findAndSave() {
    LogView view;
    view.appendLine("alpha");
    view.appendLine("needle here");
    view.appendLine("omega");
    QVERIFY(view.find("needle"));
    QCOMPARE(view.textEdit()->textCursor().selectedText(), QString("needle"));
    QVERIFY(!view.find("absent"));
    QTemporaryDir dir;
    QString error;
    QVERIFY(view.saveTo(dir.filePath("run.log"), &error));
    QFile f(dir.filePath("run.log"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(f.readAll()), QString("alpha\nneedle here\nomega"));
    QVERIFY(!view.saveTo("/nonexistent-dir/x.log", &error));
    QVERIFY(error.contains("/nonexistent-dir/x.log"));
  }
};

QTEST_MAIN(LogViewTest)
#include "log_view_test.moc"
