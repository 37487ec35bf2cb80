#pragma once
// Helpers shared by the GUI tests: isolated settings, and answering the modal dialogs that the
// real code opens (the test acts as the user).
#include <QApplication>
#include <QDir>
#include <QDialog>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QFile>
#include <functional>
#include <string>
#include <vector>

#include "option_editor.h"
#include "option_form.h"

namespace sinter::gui::test {

// The real sinter-runner: $SINTER_RUNNER, else the one this build tree makes (tests that run it).
#ifdef SINTER_RUNNER_BINARY
inline QString realRunner() {
  const QString fromEnv = qEnvironmentVariable("SINTER_RUNNER");
  return fromEnv.isEmpty() ? QStringLiteral(SINTER_RUNNER_BINARY) : fromEnv;
}
#endif

// Settings and user folders go to a throwaway home of this test process's own, removed at exit.
// CTest runs the test programs in parallel: with one shared settings file, one program's clear()
// could land between another's setRunnerPathPreference() and its Start, which then ran the real
// runner instead of the replay tool (gui_print_command_test failed about once in 25 runs).
inline void isolateSettings() {
  static QTemporaryDir home(QDir::tempPath() + QStringLiteral("/sinter-gui-test-XXXXXX"));
  if (!home.isValid()) qFatal("cannot make a temporary home folder for the test");
  qputenv("HOME", QFile::encodeName(home.path()));
  QStandardPaths::setTestModeEnabled(true);  // under $HOME/.qttest
  QCoreApplication::setOrganizationName(QStringLiteral("SinterTest"));
  QCoreApplication::setApplicationName(QStringLiteral("sinter-test"));
  const QString config = QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation);
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, config);
  QSettings().clear();
}

// Waits for the next modal dialog, hands it to `act` (which accepts or rejects it).
inline void whenModalAppears(std::function<void(QWidget*)> act, int attempts = 200) {
  QTimer::singleShot(20, qApp, [act, attempts] {
    QWidget* modal = QApplication::activeModalWidget();
    if (modal) {
      act(modal);
    } else if (attempts > 0) {
      whenModalAppears(act, attempts - 1);
    }
  });
}

inline void acceptNextDialog() {
  whenModalAppears([](QWidget* w) {
    if (auto* d = qobject_cast<QDialog*>(w)) d->accept();
  });
}

inline void rejectNextDialog() {
  whenModalAppears([](QWidget* w) {
    if (auto* d = qobject_cast<QDialog*>(w)) d->reject();
  });
}

// A minimal .safetensors file holding one 4-byte F32 tensor under each name (header-only detection).
inline bool writeTinySafetensors(const QString& path, const std::vector<std::string>& names) {
  std::string header = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) header += ",";
    header += "\"" + names[i] + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  header += "}";
  while (header.size() % 8) header += " ";
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  quint64 n = header.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  file.write(len, 8);
  file.write(header.data(), static_cast<qint64>(header.size()));
  file.write(QByteArray(static_cast<int>(4 * names.size()), '\0'));
  return true;
}

// Sets one option in a form as if the user edited it (emits the editor's changed()).
inline void setOption(OptionForm* form, const std::string& key, const Value& value) {
  OptionEditor* editor = form->editor(key);
  if (!editor) qFatal("no editor for %s", key.c_str());
  editor->setValue(value);
  emit editor->changed();
}

}  // namespace sinter::gui::test
