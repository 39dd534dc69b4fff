#include "mindie/baseline_policy.h"

#include <doctest/doctest.h>

#include "config_test_support.h"

namespace json = boost::json;
using mindie::policy::disallowed_changes;
using mindie::policy::update_config_whitelist;

TEST_CASE("whitelisted leaf changes are allowed") {
  const auto a = json::parse(R"({"motor_coordinator_config":{"logging_config":{"log_level":"INFO"}}})");
  const auto b = json::parse(R"({"motor_coordinator_config":{"logging_config":{"log_level":"DEBUG"}}})");
  CHECK(disallowed_changes(a, b, update_config_whitelist()).empty());
}

TEST_CASE("other changes are listed, each path once") {
  const auto a = json::parse(R"({"motor_deploy_config":{"image_name":"a","p_instances_num":1},"x":[1,2]})");
  const auto b = json::parse(R"({"motor_deploy_config":{"image_name":"b","p_instances_num":2},"x":[1,2,3]})");
  const auto bad = disallowed_changes(a, b, update_config_whitelist());
  CHECK(bad == std::vector<std::string>{"motor_deploy_config.image_name", "motor_deploy_config.p_instances_num", "x"});
}

TEST_CASE("a section added whole is allowed only when all it holds is whitelisted") {
  const auto a = json::parse(R"({})");
  CHECK(disallowed_changes(a, json::parse(R"({"north_config":{"name":"n","ip":"1.2.3.4","port":1}})"),
                           update_config_whitelist())
            .empty());
  CHECK(disallowed_changes(a, json::parse(R"({"north_config":{"name":"n","secret":"s"}})"),
                           update_config_whitelist()) == std::vector<std::string>{"north_config"});
}

TEST_CASE("a key holding a dot does not pass as a whitelisted path, in a new section or an existing one") {
  // "max_retry.x" below a whitelisted "...exception_config.max_retry" prefix: the leaf path quotes the key
  // (exception_config["max_retry.x"]), so it is not the whitelisted max_retry nor below it.
  const auto base = json::parse(R"({"motor_coordinator_config":{}})");
  const auto added = json::parse(R"({"motor_coordinator_config":{"exception_config":{"max_retry.x":5}}})");
  CHECK(disallowed_changes(base, added, update_config_whitelist()) ==
        std::vector<std::string>{"motor_coordinator_config.exception_config"});
  const auto with_section = json::parse(R"({"motor_coordinator_config":{"exception_config":{"max_retry":1}}})");
  const auto changed =
      json::parse(R"({"motor_coordinator_config":{"exception_config":{"max_retry":1,"max_retry.x":5}}})");
  CHECK(disallowed_changes(with_section, changed, update_config_whitelist()) ==
        std::vector<std::string>{"motor_coordinator_config.exception_config[\"max_retry.x\"]"});
}

TEST_CASE("scale's allowance is the two count paths") {
  const auto a = json::parse(R"({"motor_deploy_config":{"p_instances_num":1,"d_instances_num":1}})");
  const auto b = json::parse(R"({"motor_deploy_config":{"p_instances_num":4,"d_instances_num":2}})");
  CHECK(
      disallowed_changes(a, b, {mindie::policy::kPrefillInstancesPath, mindie::policy::kDecodeInstancesPath}).empty());
}

TEST_CASE("baseline_changes: each changed path with its values and the command that applies it") {
  using mindie::policy::Applier;
  const auto a = json::parse(R"({"motor_deploy_config":{"image_name":"a","p_instances_num":1,
    "deploy_mode":"multi_deployment"},"motor_coordinator_config":{"logging_config":{"log_level":"INFO"}},
    "x":[1,2]})");
  const auto b = json::parse(R"({"motor_deploy_config":{"image_name":"b","p_instances_num":2,
    "deploy_mode":"infer_service_set"},"motor_coordinator_config":{"logging_config":{"log_level":"DEBUG"}},
    "x":[1,3],"y":true})");
  const auto changes = mindie::policy::baseline_changes(a, b);
  REQUIRE(changes.size() == 6);
  CHECK(changes[0].path == "motor_coordinator_config.logging_config.log_level");
  CHECK(changes[0].by == Applier::UpdateConfig);
  CHECK(changes[1].path == "motor_deploy_config.deploy_mode");
  CHECK(changes[1].by == Applier::Redeploy);
  CHECK(changes[2].path == "motor_deploy_config.image_name");
  CHECK(*changes[2].from == "a");
  CHECK(*changes[2].to == "b");
  CHECK(std::string(mindie::policy::applier_text(changes[2].by)) == "deploy + rollout restart");
  CHECK(changes[3].path == "motor_deploy_config.p_instances_num");
  CHECK(changes[3].by == Applier::Scale);
  CHECK(changes[4].path == "x[1]");  // an array element, with its values
  CHECK(*changes[4].from == 2);
  CHECK(*changes[4].to == 3);
  CHECK(changes[5].path == "y");
  CHECK(!changes[5].from);
}

TEST_CASE("baseline_changes: nothing for what deploy.py injected into a stored baseline") {
  const auto stored = json::parse(R"({"motor_deploy_config":{"deploy_mode":"infer_service_set"},
    "kv_cache_pool_config":{"port":50088}})");
  const auto user = json::parse(R"({"motor_deploy_config":{},"kv_cache_pool_config":{}})");
  CHECK(mindie::policy::baseline_changes(stored, user).empty());
}

TEST_CASE("update-config's refusals: every problem of a config at once (issue 33: one run per problem)") {
  const auto base = mindie::test::parse(mindie::test::valid_config());
  auto edited = mindie::test::valid_config();
  edited["motor_deploy_config"].as_object()["p_instances_num"] = 2;
  edited["motor_deploy_config"].as_object()["image_name"] = "other:1";
  const auto refused = mindie::policy::update_config_refusals(base, mindie::test::parse(edited), "infer_service_set");
  REQUIRE(refused.size() == 2);
  CHECK(refused[0].rfind("instance counts cannot change with update-config: the baseline has 1 prefill", 0) == 0);
  // The counts are named once, with scale as the way out; the paths are what needs a redeploy beyond them.
  CHECK(refused[1] ==
        "update-config may not change these paths (they need a redeploy):\n* motor_deploy_config.image_name");
  CHECK(mindie::policy::update_config_refusals(base, base, "infer_service_set").empty());
  CHECK(mindie::policy::update_config_refusals(base, base, "multi_deployment").size() == 1);  // the mode
}
