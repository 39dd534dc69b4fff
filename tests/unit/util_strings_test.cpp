// util::join (util/strings.h), the one helper that lists items in messages and selectors; util::escape_terminal.
#include <doctest/doctest.h>

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/strings.h"
#include "util/table.h"
#include "util/terminal.h"

using mindie::util::join;

TEST_CASE("join separates the items and adds nothing around them") {
  CHECK(join(std::vector<std::string>{}, ", ") == "");
  CHECK(join(std::vector<std::string>{"a"}, ", ") == "a");
  CHECK(join(std::vector<std::string>{"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(join(std::array<std::string_view, 2>{"x", "y"}, ",") == "x,y");
  CHECK(join(std::array<const char*, 2>{"x", "y"}, "") == "xy");
}

TEST_CASE("join maps each item by a projection first") {
  struct Named {
    std::string name;
  };
  CHECK(join(std::vector<Named>{{"p"}, {"q"}}, ", ", &Named::name) == "p, q");
  const std::map<std::string, std::string> labels{{"a", "1"}, {"b", "2"}};
  CHECK(join(labels, ",", [](const auto& kv) { return kv.first + "=" + kv.second; }) == "a=1,b=2");
}

TEST_CASE("escape_terminal makes control characters visible and keeps everything else") {
  using mindie::util::escape_terminal;
  CHECK(escape_terminal("plain name-1.yaml\twith tab\nand line") == "plain name-1.yaml\twith tab\nand line");
  CHECK(escape_terminal("\x1b[31mred\x1b[0m") == "^[[31mred^[[0m");  // kubectl's "^[" for ESC
  CHECK(escape_terminal("over\rwrite") == "over\\rwrite");           // and "\r" for CR
  CHECK(escape_terminal(std::string("bel\x07 bs\x08 nul") + '\0' + " del\x7f") == "bel^G bs^H nul^@ del^?");
  CHECK(escape_terminal("c1 \xc2\x9b"
                        "2J") == "c1 <U+009B>2J");  // a CSI in UTF-8
  CHECK(escape_terminal("\xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xff") == "\xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xff");
}

TEST_CASE("Table: a cell's control characters are shown escaped, and the columns measured as shown") {
  mindie::util::Table t({{"NAME"}, {"STATUS"}}, false);
  t.add({"a\x1b[2Jb", "x"});
  t.add({"long-name", "y"});
  CHECK(t.str() == "NAME       STATUS\na^[[2Jb    x\nlong-name  y\n");
}
