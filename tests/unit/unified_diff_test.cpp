// util::unified_diff: GNU `diff -u` output for the cases an object diff meets, and the edit script's two properties
// (it turns one text into the other; it is shortest) over a fixed-seed corpus of random texts.
#include "util/unified_diff.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

using namespace mindie::util;

namespace {

/// The length of a longest common subsequence of `a` and `b`, by dynamic programming (the reference).
std::size_t lcs(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::vector<std::vector<std::size_t>> t(a.size() + 1, std::vector<std::size_t>(b.size() + 1, 0));
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j)
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  return t[a.size()][b.size()];
}

/// A text of up to `max_lines` lines drawn from a four-word alphabet (so that texts share many lines).
std::string random_text(std::mt19937& rng, int max_lines) {
  static const char* words[] = {"a\n", "b\n", "c\n", "d\n"};
  std::string s;
  const int n = std::uniform_int_distribution<int>(0, max_lines)(rng);
  for (int i = 0; i < n; ++i) s += words[std::uniform_int_distribution<int>(0, 3)(rng)];
  if (!s.empty() && rng() % 5 == 0) s.pop_back();  // sometimes no newline at the end
  return s;
}

}  // namespace

TEST_CASE("equal texts have no diff") {
  CHECK(unified_diff("", "", "a", "b").empty());
  CHECK(unified_diff("x\ny\n", "x\ny\n", "a", "b").empty());
}

TEST_CASE("a changed line in a long text: one hunk with three lines of context, as GNU diff -u") {
  std::string from, to;
  for (int i = 1; i <= 10; ++i) {
    from += "l" + std::to_string(i) + "\n";
    to += (i == 5 ? std::string("L5") : "l" + std::to_string(i)) + "\n";
  }
  CHECK(unified_diff(from, to, "LIVE/x", "MERGED/x") ==
        "--- LIVE/x\n+++ MERGED/x\n@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n");
}

TEST_CASE("changes more than two contexts apart are two hunks; closer ones share one") {
  std::string from, far, near;
  for (int i = 1; i <= 20; ++i) {
    from += "l" + std::to_string(i) + "\n";
    far += (i == 2 || i == 19 ? "X" : "l" + std::to_string(i)) + "\n";
    near += (i == 2 || i == 8 ? "X" : "l" + std::to_string(i)) + "\n";
  }
  CHECK(unified_diff(from, far, "a", "b") ==
        "--- a\n+++ b\n@@ -1,5 +1,5 @@\n l1\n-l2\n+X\n l3\n l4\n l5\n"
        "@@ -16,5 +16,5 @@\n l16\n l17\n l18\n-l19\n+X\n l20\n");
  CHECK(unified_diff(from, near, "a", "b") ==
        "--- a\n+++ b\n@@ -1,11 +1,11 @@\n l1\n-l2\n+X\n l3\n l4\n l5\n l6\n l7\n-l8\n+X\n l9\n l10\n l11\n");
}

TEST_CASE("a text from nothing and to nothing: the empty range is numbered 0,0") {
  CHECK(unified_diff("", "a\nb\n", "a", "b") == "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  CHECK(unified_diff("a\n", "", "a", "b") == "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n");
}

TEST_CASE("a last line without a newline differs from the same line with one, and is marked") {
  CHECK(unified_diff("a\nb", "a\nb\n", "x", "y") ==
        "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

TEST_CASE("an insertion in the middle is numbered from the line before it") {
  CHECK(unified_diff("a\nb\n", "a\nX\nb\n", "x", "y", 0) == "--- x\n+++ y\n@@ -1,0 +2 @@\n+X\n");
}

TEST_CASE("edit scripts over a random corpus rebuild the new text and are shortest") {
  std::mt19937 rng(20261205);
  for (int round = 0; round < 2000; ++round) {
    const std::string a = random_text(rng, 12), b = random_text(rng, 12);
    const auto from = split_lines(a), to = split_lines(b);
    const auto edits = edit_script(from, to);
    std::string rebuilt;
    std::size_t kept = 0, old_seen = 0;
    for (const Edit& e : edits) {
      if (e.kind == EditKind::Keep) {
        REQUIRE(from[e.old_line] == to[e.new_line]);
        rebuilt += to[e.new_line];
        ++kept;
      }
      if (e.kind == EditKind::Add) rebuilt += to[e.new_line];
      if (e.kind != EditKind::Add) REQUIRE(e.old_line == old_seen++);  // the old lines, each once, in order
    }
    CHECK(old_seen == from.size());
    CHECK(rebuilt == b);
    CHECK(kept == lcs(from, to));  // shortest: as many lines kept as a longest common subsequence has
  }
}
