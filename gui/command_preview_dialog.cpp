#include "command_preview_dialog.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "shell_quote.h"

namespace sinter::gui {

QString CommandPreview::text() const {
  QString out;
  out += QStringLiteral("# ") + CommandPreviewDialog::tr("Command") + QLatin1Char('\n');
  out += shellCommandLine(program, arguments) + QStringLiteral("\n\n");
  out += QStringLiteral("# ") + CommandPreviewDialog::tr("%1 (written when the run starts)").arg(tomlPath) + QLatin1Char('\n');
  out += toml;
  if (!out.endsWith(QLatin1Char('\n'))) out += QLatin1Char('\n');
  out += QStringLiteral("\n# ") + CommandPreviewDialog::tr("The same run with command-line flags only") + QLatin1Char('\n');
  out += shellCommandLine(program, equivalentArguments) + QLatin1Char('\n');
  if (!sdScriptsArguments.isEmpty()) {
    out += QStringLiteral("\n# ") + CommandPreviewDialog::tr("The same run started as sd-scripts is, by sinter-runner or by accelerate") +
           QLatin1Char('\n');
    out += shellCommandLine(program, sdScriptsArguments) + QLatin1Char('\n');
    out += shellCommandLine(QStringLiteral("accelerate"), QStringList{QStringLiteral("launch")} + sdScriptsArguments) + QLatin1Char('\n');
  }
  return out;
}

CommandPreviewDialog::CommandPreviewDialog(const CommandPreview& preview, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Print command"));
  text_ = new QPlainTextEdit(this);
  text_->setReadOnly(true);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setPlainText(preview.text());
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  QPushButton* copy = buttons->addButton(tr("Copy"), QDialogButtonBox::ActionRole);
  connect(copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(text_->toPlainText()); });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(text_);
  layout->addWidget(buttons);
  resize(820, 600);
}

QString CommandPreviewDialog::shownText() const { return text_->toPlainText(); }

}  // namespace sinter::gui
