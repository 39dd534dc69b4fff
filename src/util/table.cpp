#include "util/table.h"

#include <algorithm>

#include "util/terminal.h"

namespace mindie::util {

namespace {

/// Display width of UTF-8 text: its code points (the tree's box-drawing characters are one column, three bytes).
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

Table::Table(std::vector<Column> columns, bool wide) {
  std::vector<std::string> header;
  for (auto& c : columns) {
    shown_.push_back(wide || !c.wide);
    header.push_back(std::move(c.header));
  }
  add(std::move(header));
}

void Table::add(std::vector<std::string> cells) {
  std::vector<std::string> row;
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (i >= shown_.size() || shown_[i]) row.push_back(escape_terminal(cells[i]));  // widths of what is shown
  rows_.push_back(std::move(row));
}

std::string Table::str() const {
  std::vector<std::size_t> width;
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], display_width(r[i]));
    }
  std::string out;
  for (const auto& r : rows_) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - display_width(r[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace mindie::util
