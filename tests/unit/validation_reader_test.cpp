// The one validation vocabulary (validation/reader.h, validation/json_document.h) and its path syntax
// (util::child_path): the same value gives the same message and path in every input file.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <string>

#include "util/json_path.h"
#include "validation/json_document.h"
#include "validation/reader.h"

using namespace mindie;
namespace json = boost::json;
using validation::Notation;
using validation::Reader;

namespace {

// The one problem `r` holds, as "path: message".
std::string only_problem(const Reader& r) {
  REQUIRE(r.count() == 1);
  return r.problems()[0].path + ": " + r.problems()[0].message;
}

}  // namespace

TEST_CASE("path syntax: plain keys dotted, other keys JSON-quoted in brackets, array items indexed") {
  CHECK(util::child_path("", "roles") == "roles");
  CHECK(util::child_path("roles", "prefill") == "roles.prefill");
  CHECK(util::child_path("roles.prefill.labels", "fault-scheduling") == "roles.prefill.labels.fault-scheduling");
  CHECK(util::child_path("labels", "example.com/team") == "labels[\"example.com/team\"]");
  CHECK(util::child_path("s", "A B") == "s[\"A B\"]");
  CHECK(util::child_path("s", "") == "s[\"\"]");
  CHECK(util::child_path("", "a.b") == "[\"a.b\"]");
  CHECK(util::child_path("s", std::string("N\0UL", 4)) == "s[\"N\\u0000UL\"]");
  CHECK(util::item_path("volumes", 3) == "volumes[3]");
}

TEST_CASE("describe_value names containers in the file's notation and shows scalars as written") {
  CHECK(validation::describe_value(json::parse("{}")) == "an object");
  CHECK(validation::describe_value(json::parse("{}"), Notation::Yaml) == "a mapping");
  CHECK(validation::describe_value(json::parse("[1]")) == "an array");
  CHECK(validation::describe_value(json::parse("[1]"), Notation::Yaml) == "a list");
  CHECK(validation::describe_value(json::parse("2.0")) == "number 2.0");
  CHECK(validation::describe_value(json::parse("\"2\"")) == "string \"2\"");
  CHECK(validation::describe_value(json::parse("7")) == "integer 7");
  CHECK(validation::describe_value(json::parse("null")) == "null");
}

TEST_CASE("integers: range and type problems, with the quoting hint for YAML") {
  {
    Reader r;
    CHECK_FALSE(r.integer(json::parse("17"), "n", 1, 16));
    CHECK(only_problem(r) == "n: must be an integer 1..16, got 17");
  }
  {
    Reader r;
    CHECK_FALSE(r.integer(json::parse("\"2\""), "n", 1, 16));
    CHECK(only_problem(r) == "n: must be a JSON integer 1..16, got string \"2\"");
  }
  {
    Reader r(Notation::Yaml);
    CHECK_FALSE(r.integer(json::parse("\"2\""), "n", 1, 16));
    CHECK(only_problem(r) == "n: must be an integer (unquoted) 1..16, got string \"2\"");
  }
  {
    Reader r(Notation::Yaml);
    CHECK_FALSE(r.integer(json::parse("2.0"), "n", 1, 16));
    CHECK(only_problem(r) == "n: must be an integer 1..16, got number 2.0");
  }
  Reader r;
  CHECK(r.integer(json::parse("16"), "n", 1, 16) == 16);
  CHECK(r.count() == 0);
}

TEST_CASE("numbers: out of range shown as written, not Boost.JSON's 1.5E0") {
  {
    Reader r;
    CHECK_FALSE(r.number(json::parse("1.5"), "ratio", 0, 1));
    CHECK(only_problem(r) == "ratio: must be between 0 and 1, got 1.5");
  }
  {
    Reader r;
    CHECK_FALSE(r.number(json::parse("2"), "ratio", 0, 1));
    CHECK(only_problem(r) == "ratio: must be between 0 and 1, got 2");
  }
  Reader r;
  CHECK(r.number(json::parse("0.9"), "ratio", 0, 1) == doctest::Approx(0.9));
  CHECK(r.count() == 0);
}

TEST_CASE("fields: a missing required key is reported once, and not below a missing parent") {
  const json::object doc = json::parse(R"({"a": {"x": 1}})").as_object();
  Reader r;
  const json::object* a = r.object(&doc, "", "a", true);
  REQUIRE(a);
  CHECK_FALSE(r.integer(a, "a", "y", 0, 9, true));
  CHECK(only_problem(r) == "a.y: is required (an integer 0..9)");
  const json::object* b = r.object(&doc, "", "b", false);
  CHECK(b == nullptr);
  CHECK_FALSE(r.string(b, "b", "name", true));  // b is absent: nothing more to say
  CHECK(r.count() == 1);
}

TEST_CASE("string maps follow Kubernetes' label and annotation rules, each entry at its own path") {
  Reader r(Notation::Yaml);
  const auto m = r.string_map(json::parse(R"({"team": "llm", "bad key": "x", "n": 3, "v": "a b"})"), "labels",
                              Reader::MapKind::Labels);
  REQUIRE(m.size() == 1);
  CHECK(m[0] == std::pair<std::string, std::string>{"team", "llm"});
  REQUIRE(r.count() == 3);
  CHECK(r.problems()[0].path == "labels[\"bad key\"]");
  CHECK(r.problems()[0].message.find("qualified name") != std::string::npos);
  CHECK(r.problems()[1].path == "labels.n");
  CHECK(r.problems()[1].message == "must be a string, got integer 3 (quote it)");
  CHECK(r.problems()[2].path == "labels.v");
  CHECK(r.problems()[2].message.find("valid label value") != std::string::npos);

  Reader a;
  const auto ann = a.string_map(json::parse(R"({"example.com/note": "any text, spaces too"})"), "annotations",
                                Reader::MapKind::Annotations);
  CHECK(ann.size() == 1);
  CHECK(a.count() == 0);

  // Only numbers and booleans are told to be quoted: a nested mapping is not a quoting mistake.
  Reader n(Notation::Yaml);
  n.string_map(json::parse(R"({"nested": {"a": "b"}})"), "labels", Reader::MapKind::Labels);
  CHECK(only_problem(n) == "labels.nested: must be a string, got a mapping");
}

TEST_CASE("the annotations size counts every entry, so a bad key does not hide the size problem") {
  const std::string big(200 * 1024, 'x');
  json::object m;
  m["a"] = big;
  m["Bad Key"] = big;
  Reader r;
  r.string_map(json::value(m), "annotations", Reader::MapKind::Annotations);
  REQUIRE(r.count() == 2);
  CHECK(r.problems()[0].path == "annotations[\"Bad Key\"]");
  CHECK(r.problems()[1].path == "annotations");
  CHECK(r.problems()[1].message.starts_with("must total at most 256 KiB"));
}

TEST_CASE("only: every unknown key, with the known ones listed") {
  const json::object o = json::parse(R"({"replicas": 1, "replica": 2, "a/b": 3})").as_object();
  Reader r;
  r.only(&o, "prefill", {"replicas", "image"});
  REQUIRE(r.count() == 2);
  CHECK(r.problems()[0].path == "prefill.replica");
  CHECK(r.problems()[0].message == "is not a known key; expected one of: replicas, image");
  CHECK(r.problems()[1].path == "prefill[\"a/b\"]");
}

TEST_CASE("read_json_object: syntax with line and column, duplicates at their path, and nothing thrown") {
  {
    Reader r;
    CHECK_FALSE(validation::read_json_object("{\n  \"a\": 1,\n}", r));
    CHECK(only_problem(r).starts_with(": invalid JSON at line 3, column 1"));
  }
  {
    Reader r;
    CHECK_FALSE(validation::read_json_object("[1]", r));
    CHECK(only_problem(r) == ": must be a JSON object, got an array");
  }
  Reader r;
  const auto doc = validation::read_json_object(R"({"a": {"x.y": 1, "x.y": 2}, "b": [{"k": 1, "k": 2}]})", r);
  REQUIRE(doc);
  REQUIRE(r.count() == 2);
  CHECK(r.problems()[0].path == "a[\"x.y\"]");
  CHECK(r.problems()[0].message.find("appears twice") != std::string::npos);
  CHECK(r.problems()[1].path == "b[0].k");
  CHECK_THROWS_AS(r.throw_if_any("f.json"), validation::ValidationError);
}
