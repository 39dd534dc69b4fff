// diff_paths and replace_json_number (util/json_diff.h, util/json_text.h), the Kubernetes name rules
// (kube/names.h) and the hardware profiles (hardware/profile.h).
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "hardware/profile.h"
#include "kube/names.h"
#include "util/json_diff.h"
#include "util/json_text.h"

using namespace mindie::hardware;
using namespace mindie::kube;
using namespace mindie::util;
namespace json = boost::json;

TEST_CASE("diff_paths lists every differing path, sorted") {
  auto a = json::parse(R"({"x": {"a": 1, "b": [1, 2], "c": "s"}, "y": true, "z": [1, {"k": 1}]})");
  CHECK(diff_paths(a, a).empty());
  auto b = json::parse(R"({"x": {"a": 2, "b": [1, 2, 3], "d": "s"}, "y": true, "z": [1, {"k": 2}], "w": null})");
  CHECK(diff_paths(a, b) == std::vector<std::string>{"w", "x.a", "x.b", "x.c", "x.d", "z[1].k"});
  // Type changes are changes; 1 and 1.0 differ (validation treats them differently).
  CHECK(diff_paths(json::parse(R"({"n": 1})"), json::parse(R"({"n": 1.0})")) == std::vector<std::string>{"n"});
  CHECK(diff_paths(json::parse(R"({"n": 1})"), json::parse(R"({"n": "1"})")) == std::vector<std::string>{"n"});
  CHECK(diff_paths(json::parse(R"({"n": {}})"), json::parse(R"({"n": []})")) == std::vector<std::string>{"n"});
  // int64 and uint64 spellings of one number are equal.
  json::value i = json::object{{"n", std::int64_t(5)}};
  json::value u = json::object{{"n", std::uint64_t(5)}};
  CHECK(diff_paths(i, u).empty());
  CHECK(diff_paths(json::parse("1"), json::parse("2")) == std::vector<std::string>{""});
}

TEST_CASE("replace_json_number keeps every other byte") {
  const std::string raw =
      "{\n  \"motor_deploy_config\" : {\n\t\"p_instances_num\":1 ,  \"d_instances_num\": 16,\n"
      "    \"x\": [ 1, {\"p_instances_num\": 7} ], \"f\": -2.5e3\n  },\n  \"p_instances_num\": 3\n}\n";
  std::string out = replace_json_number(raw, "motor_deploy_config.p_instances_num", 12);
  std::string expected = raw;
  expected.replace(expected.find("\"p_instances_num\":1") + 18, 1, "12");
  CHECK(out == expected);
  CHECK(json::parse(out).at("motor_deploy_config").at("p_instances_num") == 12);

  out = replace_json_number(raw, "motor_deploy_config.d_instances_num", 2);
  CHECK(out.find("\"d_instances_num\": 2,") != std::string::npos);
  CHECK(out.size() == raw.size() - 1);
  // Top level, array elements, negative and floating numbers.
  CHECK(json::parse(replace_json_number(raw, "p_instances_num", -4)).at("p_instances_num") == -4);
  CHECK(json::parse(replace_json_number(raw, "motor_deploy_config.x[1].p_instances_num", 9))
            .at("motor_deploy_config")
            .at("x")
            .at(1)
            .at("p_instances_num") == 9);
  CHECK(json::parse(replace_json_number(raw, "motor_deploy_config.x[0]", 5)).at("motor_deploy_config").at("x").at(0) ==
        5);
  CHECK(json::parse(replace_json_number(raw, "motor_deploy_config.f", 1)).at("motor_deploy_config").at("f") == 1);
}

TEST_CASE("replace_json_number rejects what it cannot do") {
  const std::string raw = R"({"a": {"s": "1", "o": {}, "n": null, "b": true}, "k": 1})";
  CHECK_THROWS_AS(replace_json_number(raw, "a.s", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number(raw, "a.o", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number(raw, "a.n", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number(raw, "a.b", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number(raw, "a.missing", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number(raw, "a", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number("{\"k\": 1", "k", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number("{\"k\": 1} x", "k", 1), std::invalid_argument);
  CHECK_THROWS_AS(replace_json_number("", "k", 1), std::invalid_argument);
  // Key text with escapes is compared unescaped.
  CHECK(replace_json_number(R"({"a\u0062": 1})", "ab", 2) == R"({"a\u0062": 2})");
}

TEST_CASE("is_dns1123_label") {
  CHECK(is_dns1123_label("a"));
  CHECK(is_dns1123_label("mindie-motor"));
  CHECK(is_dns1123_label("0abc9"));
  CHECK(is_dns1123_label(std::string(63, 'a')));
  CHECK_FALSE(is_dns1123_label(std::string(64, 'a')));
  CHECK_FALSE(is_dns1123_label(""));
  CHECK_FALSE(is_dns1123_label("-a"));
  CHECK_FALSE(is_dns1123_label("a-"));
  CHECK_FALSE(is_dns1123_label("A"));
  CHECK_FALSE(is_dns1123_label("a.b"));
  CHECK_FALSE(is_dns1123_label("a_b"));
}

TEST_CASE("is_dns1123_subdomain and is_qualified_name follow apimachinery") {
  CHECK(is_dns1123_subdomain("example.com"));
  CHECK(is_dns1123_subdomain("a-b.c0"));
  // apimachinery's subdomain regex caps only the whole name (253), not each part.
  CHECK(is_dns1123_subdomain(std::string(70, 'a') + ".io"));
  CHECK_FALSE(is_dns1123_subdomain(std::string(254, 'a')));
  for (const char* bad : {"", ".a", "a.", "a..b", "-a.b", "a-.b", "A.b", "a_b.c"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_dns1123_subdomain(bad));
  }
  CHECK(is_qualified_name("app"));
  CHECK(is_qualified_name("example.com/Team_1.x"));
  CHECK_FALSE(is_qualified_name("example.com/"));
  CHECK_FALSE(is_qualified_name("/a"));
  CHECK_FALSE(is_qualified_name("Example.com/a"));
  CHECK_FALSE(is_qualified_name(std::string(64, 'a')));
  CHECK(is_label_value(""));
  CHECK_FALSE(is_label_value("a b"));
}

TEST_CASE("hardware profiles") {
  const HardwareProfile* a2 = find_hardware_profile("800I_A2");
  REQUIRE(a2);
  CHECK(a2->max_npus_per_pod == 8);
  CHECK_FALSE(a2->sp_block.any());
  const HardwareProfile* a3 = find_hardware_profile("800I_A3");
  REQUIRE(a3);
  CHECK(a3->max_npus_per_pod == 16);
  CHECK(a3->sp_block.any());
  CHECK(find_hardware_profile("800I_A5") == nullptr);
}
