#include "preset_diff_dialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace sinter::gui {

PresetDiffDialog::PresetDiffDialog(const QString& presetTitle, const std::vector<OptionChange>& changes,
                                   QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Apply preset"));
  setObjectName(QStringLiteral("presetDiffDialog"));
  auto* intro = new QLabel(tr("Applying “%1” changes %n option(s):", nullptr, static_cast<int>(changes.size()))
                               .arg(presetTitle),
                           this);
  intro->setWordWrap(true);
  table_ = new QTableWidget(static_cast<int>(changes.size()), 3, this);
  table_->setHorizontalHeaderLabels({tr("Option"), tr("Current"), tr("Preset")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  for (int row = 0; row < static_cast<int>(changes.size()); ++row) {
    const OptionChange& c = changes[row];
    auto* name = new QTableWidgetItem(c.label);
    name->setToolTip(QString::fromStdString(c.key));
    name->setData(Qt::UserRole, QString::fromStdString(c.key));
    table_->setItem(row, 0, name);
    table_->setItem(row, 1, new QTableWidgetItem(c.oldValue));
    table_->setItem(row, 2, new QTableWidgetItem(QStringLiteral("→ ") + c.newValue));
  }
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  buttons->addButton(tr("Apply"), QDialogButtonBox::AcceptRole);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(intro);
  layout->addWidget(table_);
  layout->addWidget(buttons);
  resize(700, 420);
}

}  // namespace sinter::gui
