#include <doctest/doctest.h>

#include "sandbox/label_selector.h"

using mindie::sandbox::FieldSelector;
using mindie::sandbox::LabelSelector;
using mindie::sandbox::SelectorError;
using nlohmann::json;

TEST_CASE("label selector: empty selects everything") {
  CHECK(LabelSelector::parse("").matches(json::object()));
  CHECK(LabelSelector::parse("  ").matches(json(nullptr)));
}

TEST_CASE("label selector: equality, inequality and existence") {
  const json labels = {{"app", "mindie"}, {"infer.huawei.com/instanceset-name", "prefill"}};
  CHECK(LabelSelector::parse("app=mindie").matches(labels));
  CHECK(LabelSelector::parse("app==mindie").matches(labels));
  CHECK_FALSE(LabelSelector::parse("app=other").matches(labels));
  CHECK(LabelSelector::parse("app!=other").matches(labels));
  CHECK(LabelSelector::parse("missing!=x").matches(labels));  // != also matches an absent key
  CHECK(LabelSelector::parse("infer.huawei.com/instanceset-name").matches(labels));
  CHECK(LabelSelector::parse("!missing").matches(labels));
  CHECK_FALSE(LabelSelector::parse("!app").matches(labels));
  CHECK(LabelSelector::parse("app=mindie, infer.huawei.com/instanceset-name = prefill").matches(labels));
  CHECK_FALSE(LabelSelector::parse("app=mindie,!infer.huawei.com/instanceset-name").matches(labels));
  CHECK(LabelSelector::parse("empty=").matches(json{{"empty", ""}}));
}

TEST_CASE("label selector: set-based requirements") {
  const json labels = {{"infer.huawei.com/inferservice-name", "a-1"}};
  CHECK(LabelSelector::parse("infer.huawei.com/inferservice-name in (a-0,a-1)").matches(labels));
  CHECK_FALSE(LabelSelector::parse("infer.huawei.com/inferservice-name in (a-0)").matches(labels));
  CHECK(LabelSelector::parse("infer.huawei.com/inferservice-name notin (a-0)").matches(labels));
  CHECK(LabelSelector::parse("other notin (x)").matches(labels));
  CHECK_FALSE(LabelSelector::parse("other in (x)").matches(labels));
  const auto reqs = LabelSelector::parse("k in (b, a), j").requirements();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].values == std::vector<std::string>{"a", "b"});
  CHECK(reqs[1].op == LabelSelector::Op::Exists);
}

TEST_CASE("label selector: numeric comparisons") {
  CHECK(LabelSelector::parse("n>3").matches(json{{"n", "10"}}));
  CHECK_FALSE(LabelSelector::parse("n<3").matches(json{{"n", "10"}}));
  CHECK_FALSE(LabelSelector::parse("n>3").matches(json{{"n", "x"}}));
}

TEST_CASE("label selector: malformed input is rejected, not crashed on") {
  for (const char* bad : {"app=", "a in (", "a in ()", "a notin x", ",", "a,", "a b", "=x", "a==b==c", "in",
                          "a in (b c)", "Bad Key!=x", "a=b(", "a>x", "!"}) {
    if (std::string(bad) == "app=") continue;  // an empty value is valid
    CAPTURE(bad);
    CHECK_THROWS_AS(LabelSelector::parse(bad), SelectorError);
  }
}

TEST_CASE("field selector: names, namespaces and pod fields") {
  const json pod = {{"metadata", {{"name", "p"}, {"namespace", "ns"}}}, {"status", {{"phase", "Running"}}}};
  CHECK(FieldSelector::parse("metadata.name=p", "Pod").matches(pod));
  CHECK(FieldSelector::parse("metadata.name==p,metadata.namespace=ns", "Pod").matches(pod));
  CHECK_FALSE(FieldSelector::parse("metadata.name!=p", "Pod").matches(pod));
  CHECK(FieldSelector::parse("status.phase=Running", "Pod").matches(pod));
  CHECK(FieldSelector::parse("", "ConfigMap").matches(pod));
  CHECK_THROWS_AS(FieldSelector::parse("status.phase=Running", "ConfigMap"), SelectorError);
  CHECK_THROWS_AS(FieldSelector::parse("metadata.name", "Pod"), SelectorError);
}
