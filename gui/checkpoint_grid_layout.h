#pragma once
// A checkpoint grid PNG as the runner writes it (`--sample_grid`, runner/sample/sample_grid.h): the
// picture and its layout from the PNG's `sinter_grid` text chunk (rows: the base model and the saved
// files; columns: the prompts; the cell size), checked against the picture before anything is
// drawn from it (the file is the runner's output, read as untrusted input).
#include <QByteArray>
#include <QImage>
#include <QString>
#include <QVector>
#include <optional>

#include "core/events.h"

namespace sinter::gui {

struct CheckpointGridRow {
  bool base = false;
  QString file, path;  // the saved file's name and path; empty for the base model
  std::optional<qint64> step, epoch;
};

struct CheckpointGridColumn {
  QString prompt, negativePrompt, sampler;
  qint64 seed = 0;
  int width = 0, height = 0, steps = 0;
  double scale = 0;
};

struct CheckpointGridLayout {
  QVector<CheckpointGridRow> rows;
  QVector<CheckpointGridColumn> columns;
  int cellWidth = 0, cellHeight = 0;
  QString model;
};

struct CheckpointGridImage {
  QImage image;
  CheckpointGridLayout layout;
};

// The PNG's text keyword of the layout.
inline constexpr const char* kCheckpointGridLayoutKey = events::kGridLayoutPngKey;

// Reads `path`: the picture and its layout, or nullopt with `error` saying what is wrong (a file
// that does not read, no layout chunk, a layout that does not parse, or one whose rows and columns
// of cells do not make up the picture).
std::optional<CheckpointGridImage> readCheckpointGrid(const QString& path, QString* error);

// The layout as the runner writes it (JSON); nullopt with `error` when it does not parse.
std::optional<CheckpointGridLayout> parseCheckpointGridLayout(const QByteArray& json, QString* error);

}  // namespace sinter::gui
