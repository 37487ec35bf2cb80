// Translations: the ja and zh_CN files translate every string (labels and tooltips from the
// registry included) with the same placeholders, are embedded as .qm, and --lang picks them.
#include <QDir>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTranslator>
#include <QXmlStreamReader>
#include <QtTest>

#include "core/registry.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "training_tab.h"
#include "translations_loader.h"

using namespace sinter;
using namespace sinter::gui;

namespace {
QStringList placeholders(const QString& s) {
  QStringList out;
  auto it = QRegularExpression(QStringLiteral("%(\\d|n)")).globalMatch(s);
  while (it.hasNext()) out << it.next().captured(0);
  out.removeDuplicates();
  out.sort();
  return out;
}
}  // namespace

class TranslationsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void everyStringIsTranslated_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("ja") << "sinter_ja.ts";
    QTest::newRow("zh_CN") << "sinter_zh_CN.ts";
  }
  void everyStringIsTranslated() {
    QFETCH(QString, file);
    QFile f(QStringLiteral(SINTER_TRANSLATIONS_DIR "/") + file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    int messages = 0, optionMessages = 0;
    QString context, source, translation;
    bool unfinished = false;
    while (!xml.atEnd()) {
      xml.readNext();
      if (xml.isStartElement() && xml.name() == QLatin1String("name")) context = xml.readElementText();
      if (xml.isStartElement() && xml.name() == QLatin1String("message")) translation.clear();
      if (xml.isStartElement() && xml.name() == QLatin1String("source")) source = xml.readElementText();
      if (xml.isStartElement() && xml.name() == QLatin1String("translation")) {
        unfinished = xml.attributes().hasAttribute(QLatin1String("type"));
        translation = xml.readElementText(QXmlStreamReader::IncludeChildElements);
      }
      if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
        ++messages;
        if (context == QLatin1String("Option")) ++optionMessages;
        QVERIFY2(!unfinished, qPrintable(source));
        QVERIFY2(!translation.trimmed().isEmpty(), qPrintable(source));
        QCOMPARE(placeholders(translation), placeholders(source));
      }
    }
    QVERIFY(!xml.hasError());
    QVERIFY(messages > 300);
    // Every registry label, tooltip and unset meaning is in the file.
    QCOMPARE(optionMessages, [] {
      QSet<QString> texts;
      for (const OptionSpec& s : optionRegistry()) {
        texts << s.label << s.tooltip;
        if (s.unsetMeaning) texts << s.unsetMeaning;
      }
      return static_cast<int>(texts.size());
    }());
  }

  void embeddedQmFilesTranslate() {
    QTranslator zh;
    QVERIFY(zh.load(QStringLiteral(":/i18n/sinter_zh_CN.qm")));
    QCOMPARE(zh.translate("sinter::gui::RunPanel", "Start training"), QString::fromUtf8("开始训练"));
    QCOMPARE(zh.translate("Option", "Learning rate"), QString::fromUtf8("学习率"));
  }

  void langOptionSwitchesTheWholeWindow() {
    QCOMPARE(installTranslations(*qApp, QStringLiteral("ja")), QStringLiteral("ja_JP"));
    MainWindow window;
    QCOMPARE(window.tabs()->tabText(2), QString::fromUtf8("ファインチューニング"));
    QCOMPARE(window.tabs()->tabText(4), QString::fromUtf8("ツール"));
    TrainingTab* tab = window.tab(Tab::LoRA);
    OptionEditor* lr = tab->form()->editor("learning_rate");
    QCOMPARE(lr->labelText(), QString::fromUtf8("学習率"));
    QVERIFY(lr->toolTipText().contains(QString::fromUtf8("基本の学習率")));
    QVERIFY(window.windowTitle().contains(QString::fromUtf8("無題")));
  }
};

QTEST_MAIN(TranslationsTest)
#include "translations_test.moc"
