#pragma once
// Helpers shared by the GUI tests: isolated settings, and answering the modal dialogs that the
// real code opens (the test acts as the user).
#include <QApplication>
#include <QDialog>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTimer>
#include <functional>

namespace sinter::gui::test {

// Settings and user folders go to a throwaway test location.
inline void isolateSettings() {
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName(QStringLiteral("SinterTest"));
  QCoreApplication::setApplicationName(QStringLiteral("sinter-test"));
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

}  // namespace sinter::gui::test
