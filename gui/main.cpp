// sinter: the desktop app. `sinter [--open FILE.toml] [--lang ja|zh_CN] [FILE.toml]`
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "app_paths.h"
#include "main_window.h"
#include "translations_loader.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Sinter"));
  QApplication::setApplicationName(QStringLiteral("sinter"));
  QApplication::setApplicationVersion(QStringLiteral(SINTER_VERSION));
  QApplication::setWindowIcon(sinter::gui::appIcon());
  QGuiApplication::setDesktopFileName(QStringLiteral("io.github.sinter.Sinter"));

  // --lang is read before the parser so that its own messages are translated too.
  QString language;
  const QStringList args = QCoreApplication::arguments();
  for (int i = 1; i < args.size(); ++i) {
    if (args[i] == QLatin1String("--lang") && i + 1 < args.size()) language = args[i + 1];
    else if (args[i].startsWith(QLatin1String("--lang="))) language = args[i].mid(7);
  }
  sinter::gui::installTranslations(app, language);

  QCommandLineParser parser;
  parser.setApplicationDescription(QCoreApplication::translate("main", "Sinter: a training studio for SDXL, FLUX.1, SD 1.x, SD 2.x and SD 3.x."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption open(QStringLiteral("open"), QCoreApplication::translate("main", "Open a configuration file."),
                                QStringLiteral("FILE.toml"));
  const QCommandLineOption lang(QStringLiteral("lang"),
                                QCoreApplication::translate("main", "User interface language (ja, zh_CN, en)."),
                                QStringLiteral("LANGUAGE"));
  parser.addOption(open);
  parser.addOption(lang);
  parser.addPositionalArgument(QStringLiteral("file"), QCoreApplication::translate("main", "A configuration file to open."),
                               QStringLiteral("[FILE.toml]"));
  parser.process(app);

  sinter::gui::MainWindow window;
  window.show();
  QString file = parser.value(open);
  if (file.isEmpty() && !parser.positionalArguments().isEmpty()) file = parser.positionalArguments().first();
  if (!file.isEmpty()) window.openFile(file);
  return app.exec();
}
