#include "checkpoint_grid_layout.h"

#include <QCoreApplication>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace sinter::gui {

namespace {

QString translated(const char* text) { return QCoreApplication::translate("CheckpointGridLayout", text); }

std::optional<qint64> optionalNumber(const QJsonValue& v) {
  if (!v.isDouble()) return std::nullopt;
  return static_cast<qint64>(v.toDouble());
}

// A picture of this many cells stays within what QImage reads by default (256 MB).
constexpr int kMaxCells = 4096;

}  // namespace

std::optional<CheckpointGridLayout> parseCheckpointGridLayout(const QByteArray& json, QString* error) {
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
  if (!doc.isObject()) {
    *error = translated("Its layout does not read: %1").arg(parseError.errorString());
    return std::nullopt;
  }
  const QJsonObject o = doc.object();
  CheckpointGridLayout layout;
  layout.cellWidth = o.value(QStringLiteral("cell_width")).toInt();
  layout.cellHeight = o.value(QStringLiteral("cell_height")).toInt();
  layout.model = o.value(QStringLiteral("model")).toString();
  for (const QJsonValue& v : o.value(QStringLiteral("rows")).toArray()) {
    const QJsonObject r = v.toObject();
    CheckpointGridRow row;
    row.base = r.value(QStringLiteral("base")).toBool();
    row.file = r.value(QStringLiteral("file")).toString();
    row.path = r.value(QStringLiteral("path")).toString();
    row.step = optionalNumber(r.value(QStringLiteral("step")));
    row.epoch = optionalNumber(r.value(QStringLiteral("epoch")));
    layout.rows.push_back(row);
  }
  for (const QJsonValue& v : o.value(QStringLiteral("columns")).toArray()) {
    const QJsonObject c = v.toObject();
    CheckpointGridColumn column;
    column.prompt = c.value(QStringLiteral("prompt")).toString();
    column.negativePrompt = c.value(QStringLiteral("negative_prompt")).toString();
    column.sampler = c.value(QStringLiteral("sampler")).toString();
    column.seed = static_cast<qint64>(c.value(QStringLiteral("seed")).toDouble());
    column.width = c.value(QStringLiteral("width")).toInt();
    column.height = c.value(QStringLiteral("height")).toInt();
    column.steps = c.value(QStringLiteral("sample_steps")).toInt();
    column.scale = c.value(QStringLiteral("scale")).toDouble();
    layout.columns.push_back(column);
  }
  if (layout.rows.isEmpty() || layout.columns.isEmpty() || layout.cellWidth <= 0 || layout.cellHeight <= 0 ||
      static_cast<qint64>(layout.rows.size()) * layout.columns.size() > kMaxCells) {
    *error = translated("Its layout names no rows, no columns or no cell size.");
    return std::nullopt;
  }
  return layout;
}

std::optional<CheckpointGridImage> readCheckpointGrid(const QString& path, QString* error) {
  QImageReader reader(path);
  CheckpointGridImage grid;
  grid.image = reader.read();
  if (grid.image.isNull()) {
    *error = translated("%1 cannot be read: %2").arg(path, reader.errorString());
    return std::nullopt;
  }
  const QString text = grid.image.text(QString::fromLatin1(kCheckpointGridLayoutKey));
  if (text.isEmpty()) {
    *error = translated("%1 is no checkpoint grid: it has no layout.").arg(path);
    return std::nullopt;
  }
  std::optional<CheckpointGridLayout> layout = parseCheckpointGridLayout(text.toUtf8(), error);
  if (!layout) {
    *error = QStringLiteral("%1: %2").arg(path, *error);
    return std::nullopt;
  }
  if (static_cast<qint64>(layout->cellWidth) * layout->columns.size() != grid.image.width() ||
      static_cast<qint64>(layout->cellHeight) * layout->rows.size() != grid.image.height()) {
    *error = translated("%1: its layout (%2 x %3 cells of %4x%5) does not match the picture (%6x%7).")
                 .arg(path)
                 .arg(layout->rows.size())
                 .arg(layout->columns.size())
                 .arg(layout->cellWidth)
                 .arg(layout->cellHeight)
                 .arg(grid.image.width())
                 .arg(grid.image.height());
    return std::nullopt;
  }
  grid.layout = *layout;
  return grid;
}

}  // namespace sinter::gui
