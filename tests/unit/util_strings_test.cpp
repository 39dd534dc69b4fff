// util::join (util/strings.h): the one helper that lists items in messages and selectors.
#include <doctest/doctest.h>

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/strings.h"

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
