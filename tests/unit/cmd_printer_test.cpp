// cmd::Printer: the output format decides what a command's results and views print (commands never test it).
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cmd/common.h"

using namespace mindie;
namespace json = boost::json;

namespace {

const kube::GVR kThing{"example.com", "v1", "things", "Thing", true};

/// What `format` prints for a view of thing "a" and the human line "a ready".
std::string printed(const std::string& format) {
  std::ostringstream out, err;
  cmd::Printer printer(out, err, format);
  printer.view(kThing, "a", json::object{{"kind", "Thing"}, {"metadata", {{"name", "a"}, {"managedFields", 1}}}},
               [](bool wide) { return std::string(wide ? "wide table\n" : "table\n"); });
  printer.human("a ready");
  printer.flush();
  CHECK(err.str().empty());
  return out.str();
}

}  // namespace

TEST_CASE("Printer::view and Printer::human: one object shown in each -o format") {
  CHECK(printed("") == "table\na ready\n");
  CHECK(printed("wide") == "wide table\n");
  CHECK(printed("name") == "thing.example.com/a\n");
  CHECK(printed("json") == "{\n    \"kind\": \"Thing\",\n    \"metadata\": {\n        \"name\": \"a\"\n    }\n}\n");
  CHECK(printed("yaml") == "kind: Thing\nmetadata:\n  name: a\n");
}
