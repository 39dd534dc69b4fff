// Myers' diff and GNU's unified format; see unified_diff.h.
#include "util/unified_diff.h"

#include <algorithm>

namespace mindie::util {

namespace {

using Lines = std::vector<std::string_view>;

/// The V array of Myers' greedy search before round `d`, kept for k in [-d-1, d+1] (what the backtrack reads).
struct Round {
  long low;  ///< the k of values[0]
  std::vector<long> values;
  long at(long k) const { return values[static_cast<std::size_t>(k - low)]; }
};

/// Whether the path to diagonal k in round d comes down from k+1 (an added line) rather than across from k-1.
bool comes_down(long k, long d, const std::vector<long>& v, long offset) {
  return k == -d ||
         (k != d && v[static_cast<std::size_t>(k - 1 + offset)] < v[static_cast<std::size_t>(k + 1 + offset)]);
}

/// Myers' forward search over a[0..n) and b[0..m); returns the V arrays of each round.
std::vector<Round> search(const std::string_view* a, long n, const std::string_view* b, long m) {
  const long max = n + m;
  const long offset = max + 1;
  std::vector<long> v(static_cast<std::size_t>(2 * max + 3), 0);
  std::vector<Round> trace;
  for (long d = 0; d <= max; ++d) {
    Round r{-d - 1, {}};
    r.values.assign(v.begin() + (offset - d - 1), v.begin() + (offset + d + 2));
    trace.push_back(std::move(r));
    for (long k = -d; k <= d; k += 2) {
      long x = comes_down(k, d, v, offset) ? v[static_cast<std::size_t>(k + 1 + offset)]
                                           : v[static_cast<std::size_t>(k - 1 + offset)] + 1;
      long y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[static_cast<std::size_t>(k + offset)] = x;
      if (x >= n && y >= m) return trace;
    }
  }
  return trace;  // not reached: round n + m always ends the search
}

/// Walks the rounds back from (n, m), appending the edits in reverse; positions are shifted by `skip` (the common
/// head left out of the search).
void backtrack(const std::vector<Round>& trace, long n, long m, std::size_t skip, std::vector<Edit>& reversed) {
  long x = n, y = m;
  const auto at = [skip](long i) { return static_cast<std::size_t>(i) + skip; };
  for (long d = static_cast<long>(trace.size()) - 1; d >= 0; --d) {
    const Round& r = trace[static_cast<std::size_t>(d)];
    const long k = x - y;
    const bool down = k == -d || (k != d && r.at(k - 1) < r.at(k + 1));
    const long prev_k = down ? k + 1 : k - 1;
    const long prev_x = r.at(prev_k);
    const long prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x, --y;
      reversed.push_back({EditKind::Keep, at(x), at(y)});
    }
    if (d == 0) break;
    if (down) reversed.push_back({EditKind::Add, at(x), at(prev_y)});
    else reversed.push_back({EditKind::Remove, at(prev_x), at(y)});
    x = prev_x, y = prev_y;
  }
}

/// "l,n" as GNU diff numbers a range starting at 0-based `start` of `count` lines.
std::string range(std::size_t start, std::size_t count) {
  if (count == 0) return std::to_string(start) + ",0";  // the line before the empty range
  if (count == 1) return std::to_string(start + 1);
  return std::to_string(start + 1) + "," + std::to_string(count);
}

/// `prefix` + `line`, ended with a newline, and GNU's marker after a line that had none.
void put_line(std::string& out, char prefix, std::string_view line) {
  out += prefix;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

/// One hunk: the edits [first, last) of `edits`.
void put_hunk(std::string& out, const std::vector<Edit>& edits, std::size_t first, std::size_t last, const Lines& from,
              const Lines& to) {
  std::size_t old_count = 0, new_count = 0;
  for (std::size_t i = first; i < last; ++i) {
    if (edits[i].kind != EditKind::Add) ++old_count;
    if (edits[i].kind != EditKind::Remove) ++new_count;
  }
  out += "@@ -" + range(edits[first].old_line, old_count) + " +" + range(edits[first].new_line, new_count) + " @@\n";
  for (std::size_t i = first; i < last; ++i) {
    const Edit& e = edits[i];
    if (e.kind == EditKind::Keep) put_line(out, ' ', from[e.old_line]);
    else if (e.kind == EditKind::Remove) put_line(out, '-', from[e.old_line]);
    else put_line(out, '+', to[e.new_line]);
  }
}

}  // namespace

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

std::vector<Edit> edit_script(const Lines& from, const Lines& to) {
  // The common head and tail need no search: most object diffs change a few lines of many.
  std::size_t head = 0;
  while (head < from.size() && head < to.size() && from[head] == to[head]) ++head;
  std::size_t tail = 0;
  while (tail < from.size() - head && tail < to.size() - head &&
         from[from.size() - 1 - tail] == to[to.size() - 1 - tail])
    ++tail;
  const long n = static_cast<long>(from.size() - head - tail);
  const long m = static_cast<long>(to.size() - head - tail);
  std::vector<Edit> edits;
  for (std::size_t i = 0; i < head; ++i) edits.push_back({EditKind::Keep, i, i});
  std::vector<Edit> middle;
  backtrack(search(from.data() + head, n, to.data() + head, m), n, m, head, middle);
  edits.insert(edits.end(), middle.rbegin(), middle.rend());
  for (std::size_t i = tail; i > 0; --i) edits.push_back({EditKind::Keep, from.size() - i, to.size() - i});
  return edits;
}

std::string unified_diff(std::string_view from_text, std::string_view to_text, const std::string& from_label,
                         const std::string& to_label, std::size_t context) {
  const Lines from = split_lines(from_text);
  const Lines to = split_lines(to_text);
  const std::vector<Edit> edits = edit_script(from, to);
  std::vector<std::size_t> changes;
  for (std::size_t i = 0; i < edits.size(); ++i)
    if (edits[i].kind != EditKind::Keep) changes.push_back(i);
  if (changes.empty()) return {};
  std::string out = "--- " + from_label + "\n+++ " + to_label + "\n";
  // Changes closer than two contexts apart share a hunk (GNU diff's rule).
  std::size_t group = 0;
  for (std::size_t c = 1; c <= changes.size(); ++c) {
    if (c < changes.size() && changes[c] - changes[c - 1] - 1 <= 2 * context) continue;
    const std::size_t first = changes[group] >= context ? changes[group] - context : 0;
    const std::size_t last = std::min(edits.size(), changes[c - 1] + 1 + context);
    put_hunk(out, edits, first, last, from, to);
    group = c;
  }
  return out;
}

}  // namespace mindie::util
