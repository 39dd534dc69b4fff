// YAML <-> JSON conversion (util/yaml_json.h), used for the built-in manifests and -o yaml output.
#include <doctest/doctest.h>

#include "util/yaml_json.h"

using namespace mindie::util;
namespace json = boost::json;

TEST_CASE("plain scalars resolve by the YAML 1.2 core schema, quoted ones stay strings") {
  auto v = yaml_to_json(R"(
null1: null
null2: ~
null3:
t: true
f: False
i: 42
neg: -7
hex: 0x1F
oct: 0o17
big: 18446744073709551615
d: 2.5
e: 1e3
dot: .5
s: hello
yes11: yes
q1: "true"
q2: '1'
q3: "null"
ver: 1.2.3
lit: |
  line1
  line2
list: [1, "2", x]
)",
                        "t.yaml");
  const auto& o = v.as_object();
  CHECK(o.at("null1").is_null());
  CHECK(o.at("null2").is_null());
  CHECK(o.at("null3").is_null());
  CHECK(o.at("t") == true);
  CHECK(o.at("f") == false);
  CHECK(o.at("i") == 42);
  CHECK(o.at("neg") == -7);
  CHECK(o.at("hex") == 31);
  CHECK(o.at("oct") == 15);
  CHECK(o.at("big").is_uint64());
  CHECK(o.at("d") == 2.5);
  CHECK(o.at("e").is_double());
  CHECK(o.at("dot") == 0.5);
  CHECK(o.at("s") == "hello");
  CHECK(o.at("yes11") == "yes");  // YAML 1.2: not a boolean
  CHECK(o.at("q1") == "true");
  CHECK(o.at("q2") == "1");
  CHECK(o.at("q3") == "null");
  CHECK(o.at("ver") == "1.2.3");
  CHECK(o.at("lit") == "line1\nline2\n");
  CHECK(o.at("list") == json::array{1, "2", "x"});
}

TEST_CASE("explicit core tags") {
  auto v = yaml_to_json("a: !!str 12\nb: !!float 3\n", "t.yaml");
  CHECK(v.at("a") == "12");
  CHECK(v.at("b").is_double());
  CHECK_THROWS_AS(yaml_to_json("a: !!int abc\n", "t.yaml"), YamlError);
}

TEST_CASE("errors name the source and line") {
  try {
    yaml_to_json("a: 1\nb: [1, 2\n", "bad.yaml");
    FAIL("expected YamlError");
  } catch (const YamlError& e) {
    CHECK(std::string(e.what()).rfind("bad.yaml:", 0) == 0);
  }
  CHECK_THROWS_AS(yaml_to_json("a: 1\na: 2\n", "dup.yaml"), YamlError);
  CHECK_THROWS_AS(yaml_to_json("a: .inf\n", "inf.yaml"), YamlError);
  CHECK_THROWS_AS(yaml_to_json("? [a]\n: 1\n", "key.yaml"), YamlError);
  CHECK_THROWS_AS(yaml_to_json("a: 1\n---\nb: 2\n", "two.yaml"), YamlError);
  CHECK_THROWS_AS(yaml_to_json("", "empty.yaml"), YamlError);
}

TEST_CASE("multi-document streams skip empty documents") {
  auto docs = yaml_to_json_all("---\na: 1\n---\n---\nb: 2\n", "s.yaml");
  REQUIRE(docs.size() == 2);
  CHECK(docs[1].at("b") == 2);
}

TEST_CASE("json_to_yaml round trips every kind of value") {
  json::value v = json::parse(R"({
    "z": 1, "a": "text", "quoted": ["true", "1", "", "null", "~", "1.5", "0x10", "yes", "off", "1e3"],
    "n": null, "b": false, "d": 2.0, "d2": 0.1, "neg": -3, "big": 18446744073709551615,
    "multi": "line1\nline2\n", "multi_nonl": "a\nb", "lead": " x\ny", "colon": "a: b", "hash": "# c",
    "empty_o": {}, "empty_a": [], "nested": {"list": [{"k": "v"}, [1, 2]]}, "unicode": "ümlaut ✓",
    "trailing_nl2": "x\n\n", "tab": "a\tb", "ctl": "a\u0001b"
  })");
  std::string y = json_to_yaml(v);
  CHECK(y.rfind("---", 0) != 0);
  CHECK(yaml_to_json(y, "out.yaml") == v);
  // Keys keep their order.
  CHECK(y.find("z:") < y.find("a:"));
  // Multi-line strings are literal blocks.
  CHECK(y.find("multi: |\n  line1\n  line2\n") != std::string::npos);
  // kubectl-like: strings that look like other types are quoted.
  CHECK(y.find("\"true\"") != std::string::npos);
  CHECK(y.find("d: 2.0") != std::string::npos);
  CHECK(y.find("\"n\": null") != std::string::npos);  // "n" is a YAML 1.1 boolean: quoted
}

TEST_CASE("json_to_yaml of scalars and the manifests style") {
  CHECK(yaml_to_json(json_to_yaml("1"), "s") == "1");
  CHECK(yaml_to_json(json_to_yaml(json::value(7)), "s") == 7);
  auto obj = json::parse(R"({"metadata": {"labels": {"fault-retry-times": "10000"}}, "items": [1]})");
  std::string y = json_to_yaml(obj);
  CHECK(y.find("fault-retry-times: \"10000\"") != std::string::npos);
}
