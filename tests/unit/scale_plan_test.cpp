#include "mindie/scale_plan.h"

#include <doctest/doctest.h>

namespace json = boost::json;
using mindie::scale::build_replicas_patch;
using mindie::scale::build_undo_patch;
using mindie::scale::plan_role_changes;
using mindie::scale::PlanError;

namespace {

json::object iss_with_roles(json::array roles) {
  return json::object{{"spec", {{"replicas", 1}, {"template", {{"roles", std::move(roles)}}}}}};
}

json::array standard_roles() {
  return json::array{json::object{{"name", "controller"}, {"replicas", 1}},
                     json::object{{"name", "coordinator"}, {"replicas", 1}},
                     json::object{{"name", "prefill"}, {"replicas", 1}},
                     json::object{{"name", "decode"}, {"replicas", 2}}};
}

}  // namespace

TEST_CASE("plan finds each role's index and live replicas") {
  const auto changes = plan_role_changes(iss_with_roles(standard_roles()), {{"prefill", 3}, {"decode", 2}});
  REQUIRE(changes.size() == 2);
  // std::map orders targets by name: decode before prefill.
  CHECK(changes[0].role == "decode");
  CHECK(changes[0].index == 3);
  CHECK(changes[0].from == 2);
  CHECK(changes[1].role == "prefill");
  CHECK(changes[1].index == 2);
  CHECK(changes[1].to == 3);
}

TEST_CASE("the patch tests name and old replicas, then replaces only the changed roles") {
  const auto changes = plan_role_changes(iss_with_roles(standard_roles()), {{"prefill", 3}, {"decode", 2}});
  const json::array patch = build_replicas_patch(changes);
  const json::array expected = json::parse(R"([
    {"op":"test","path":"/spec/template/roles/2/name","value":"prefill"},
    {"op":"test","path":"/spec/template/roles/2/replicas","value":1},
    {"op":"replace","path":"/spec/template/roles/2/replicas","value":3}])")
                                   .as_array();
  CHECK(patch == expected);
}

TEST_CASE("the undo patch tests the new value and restores the old one") {
  const auto changes = plan_role_changes(iss_with_roles(standard_roles()), {{"prefill", 3}});
  const json::array undo = build_undo_patch(changes);
  REQUIRE(undo.size() == 3);
  CHECK(undo[1].at("value") == 3);
  CHECK(undo[2].at("value") == 1);
}

TEST_CASE("nothing to change gives an empty patch") {
  const auto changes = plan_role_changes(iss_with_roles(standard_roles()), {{"prefill", 1}});
  CHECK(build_replicas_patch(changes).empty());
}

TEST_CASE("a role without replicas is set with add, guarded by its name") {
  json::array roles{json::object{{"name", "prefill"}}};
  const auto changes = plan_role_changes(iss_with_roles(roles), {{"prefill", 2}});
  const json::array patch = build_replicas_patch(changes);
  REQUIRE(patch.size() == 2);
  CHECK(patch[1].at("op") == "add");
}

TEST_CASE("refusals name the role and the reason") {
  SUBCASE("role missing") {
    CHECK_THROWS_WITH_AS(plan_role_changes(iss_with_roles(standard_roles()), {{"union", 1}}),
                         doctest::Contains("no role named union"), PlanError);
    // ... and how to get it back (someone removed it from the live object).
    CHECK_THROWS_WITH_AS(plan_role_changes(iss_with_roles(standard_roles()), {{"union", 1}}),
                         doctest::Contains("kubectl mindie deploy restores the roles"), PlanError);
  }
  SUBCASE("HPA owns the replicas") {
    json::array roles{json::object{{"name", "decode"}, {"replicas", 1}, {"scalingPolicy", {{"type", "HPA"}}}}};
    CHECK_THROWS_WITH_AS(plan_role_changes(iss_with_roles(roles), {{"decode", 2}}), doctest::Contains("scalingPolicy"),
                         PlanError);
  }
  SUBCASE("replicas not an integer") {
    json::array roles{json::object{{"name", "decode"}, {"replicas", "2"}}};
    CHECK_THROWS_AS(plan_role_changes(iss_with_roles(roles), {{"decode", 2}}), PlanError);
  }
  SUBCASE("no roles array") {
    CHECK_THROWS_AS(plan_role_changes(json::object{{"spec", json::object{}}}, {{"decode", 2}}), PlanError);
  }
}

TEST_CASE("instance_cuts: the roles a count below the live one, or a role no longer rendered, would shrink") {
  const auto iss = boost::json::parse(R"({"spec":{"template":{"roles":[
    {"name":"controller"},{"name":"prefill","replicas":3},{"name":"decode","replicas":1},{"name":"union","replicas":2}
  ]}}})")
                       .as_object();
  const auto cuts = mindie::scale::instance_cuts(iss, {{"controller", 1}, {"prefill", 1}, {"decode", 2}});
  REQUIRE(cuts.size() == 2);
  CHECK(cuts[0].role == "prefill");
  CHECK(cuts[0].index == 1);
  CHECK(cuts[0].from == 3);
  CHECK(cuts[0].to == 1);
  CHECK(cuts[1].role == "union");  // not rendered any more: all its instances go
  CHECK(cuts[1].to == 0);
  CHECK(mindie::scale::instance_cuts(iss, {{"controller", 1}, {"prefill", 3}, {"decode", 1}, {"union", 2}}).empty());
}
