#include "translations_loader.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace sinter::gui {

QString installTranslations(QCoreApplication& app, const QString& language) {
  const QLocale locale = language.isEmpty() ? QLocale::system() : QLocale(language);
  auto* translator = new QTranslator(&app);
  // Embedded as :/i18n/sinter_<lang>.qm; QTranslator tries ja_JP, then ja.
  if (!translator->load(locale, QStringLiteral("sinter"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
    delete translator;
    return {};
  }
  app.installTranslator(translator);
  auto* qtTranslator = new QTranslator(&app);
  if (qtTranslator->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                         QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
    app.installTranslator(qtTranslator);
  else
    delete qtTranslator;
  QLocale::setDefault(locale);
  return locale.name();
}

}  // namespace sinter::gui
