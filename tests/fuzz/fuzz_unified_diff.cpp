// libFuzzer target: the input is two texts split at its first NUL byte; util::edit_script must rebuild the second
// from the first, and util::unified_diff be empty exactly when they are equal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/unified_diff.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mindie::util;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = input.find('\0');
  const std::string_view a = input.substr(0, cut);
  const std::string_view b = cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);
  const auto from = split_lines(a), to = split_lines(b);
  std::string rebuilt;
  for (const Edit& e : edit_script(from, to)) {
    if (e.kind == EditKind::Keep && from[e.old_line] != to[e.new_line]) __builtin_trap();
    if (e.kind != EditKind::Remove) rebuilt += to[e.new_line];
  }
  if (rebuilt != b) __builtin_trap();
  if (unified_diff(a, b, "a", "b").empty() != (a == b)) __builtin_trap();
  return 0;
}
