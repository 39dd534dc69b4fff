// Text tables as kubectl's printers draw them: left-aligned columns padded to the widest cell, and columns only the
// wide view (-o wide) shows (kubernetes/cli-runtime pkg/printers/tablewriter.go, pkg/printers/tableprinter.go).
#pragma once

#include <string>
#include <vector>

namespace mindie::util {

/// One column of a Table: its header, and whether only the wide view shows it.
struct Column {
  std::string header;
  bool wide = false;
};

/// A table of text cells, header first, in left-aligned columns two spaces apart whose widths come from the widest
/// cell (in display columns: UTF-8 code points, so a tree's box-drawing characters count one), trailing spaces
/// trimmed. A row may have fewer cells than there are columns (the inner rows of a tree).
class Table {
 public:
  /// The columns in order; `wide` shows the wide ones too.
  Table(std::vector<Column> columns, bool wide);
  /// Adds a row: its cells in column order, wide columns included (dropped unless the table is wide); each cell
  /// through escape_terminal (util/terminal.h), measured as shown.
  void add(std::vector<std::string> cells);
  /// The table, each line ending in '\n'.
  std::string str() const;

 private:
  std::vector<bool> shown_;  ///< per column: drawn in this view
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace mindie::util
