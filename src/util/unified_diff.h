// Line diffs in the unified format of GNU `diff -u -N` (what kubectl diff runs by default), made in-process by
// Myers' O(ND) algorithm ("An O(ND) Difference Algorithm and Its Variations", 1986).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mindie::util {

/// One step of an edit script: a line both texts keep, one only the old text has, or one only the new text has.
enum class EditKind { Keep, Remove, Add };

struct Edit {
  EditKind kind;
  std::size_t old_line;  ///< index into the old lines (Keep, Remove); for Add, how many old lines precede it
  std::size_t new_line;  ///< index into the new lines (Keep, Add); for Remove, how many new lines precede it
};

/// A shortest edit script turning `from` into `to` (Myers; common head and tail kept first).
std::vector<Edit> edit_script(const std::vector<std::string_view>& from, const std::vector<std::string_view>& to);

/// `text` cut after each '\n', each line keeping its newline, so that a last line without one differs from the same
/// line with one (as GNU diff compares them); a last line without one is a line too.
std::vector<std::string_view> split_lines(std::string_view text);

/// The unified diff of `from` against `to` with `context` lines around each change, headed "--- from_label" and
/// "+++ to_label", hunks as GNU diff numbers them ("@@ -l,n +l,n @@", ",1" left out, an empty range numbered by the
/// line before it), "\ No newline at end of file" after a last line without one. "" when the texts are equal.
std::string unified_diff(std::string_view from, std::string_view to, const std::string& from_label,
                         const std::string& to_label, std::size_t context = 3);

}  // namespace mindie::util
