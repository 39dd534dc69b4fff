// mindie::revision: the baseline's history as ControllerRevisions — names, what one holds and who wrote it, which
// ones a history limit prunes, and what each changed relative to the one before.
#include "mindie/revision.h"

#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <optional>

using namespace mindie;
namespace json = boost::json;

namespace {

/// motor-config as read from a server: namespace, uid and the data deploy stores.
json::object config_map(const std::string& user_config, const std::string& env = "") {
  json::object data{{"user_config.json", user_config}, {"engine.sh", "#!/bin/sh\n"}};
  if (!env.empty()) data["env.json"] = env;
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "motor-config"}, {"namespace", "team-a"}, {"uid", "u-1"}}},
          {"data", data}};
}

/// Revision `n` of `user_config` as the server lists it.
revision::Revision listed(std::int64_t n, const std::string& user_config, const std::string& env = "") {
  const auto content = revision::content_of(baseline::read_baseline(config_map(user_config, env), "team-a"));
  REQUIRE(content);
  json::object obj = revision::render(config_map(user_config, env), n, *content, {"scale", "ops@host", 1764748920});
  obj["metadata"].as_object()["uid"] = "r-" + std::to_string(n);
  const auto r = revision::parse(obj);
  REQUIRE(r);
  return *r;
}

}  // namespace

TEST_CASE("revision::render: an apps/v1 ControllerRevision owned by motor-config, read back whole") {
  const json::object cm = config_map(R"({"a":1})", R"({"e":{}})");
  const auto content = revision::content_of(baseline::read_baseline(cm, "team-a"));
  REQUIRE(content);
  const json::object obj = revision::render(cm, 3, *content, {"update-config", "ops@host", 1764748920});
  CHECK(obj.at("apiVersion") == "apps/v1");
  CHECK(obj.at("kind") == "ControllerRevision");
  CHECK(obj.at("revision") == 3);
  const json::object& md = obj.at("metadata").as_object();
  CHECK(md.at("name") == "motor-config-3");
  CHECK(md.at("namespace") == "team-a");
  CHECK(md.at("labels").at(revision::kHistoryLabel) == "motor-config");
  const json::object& owner = md.at("ownerReferences").as_array().at(0).as_object();
  CHECK(owner.at("kind") == "ConfigMap");
  CHECK(owner.at("name") == "motor-config");
  CHECK(owner.at("uid") == "u-1");  // deleting motor-config garbage-collects its history
  CHECK(md.at("annotations").at(revision::kTimeAnnotation) == "2025-12-03T08:02:00Z");
  CHECK(obj.at("data").at("user_config.json") == R"({"a":1})");
  CHECK(obj.at("data").at("env.json") == R"({"e":{}})");
  CHECK_FALSE(obj.at("data").as_object().contains("overrides.yaml"));
  CHECK(obj.at("data").at(revision::kScriptsDigestKey).as_string().size() == 64);

  const auto back = revision::parse(obj);
  REQUIRE(back);
  CHECK(back->number == 3);
  CHECK(back->content == *content);
  CHECK(back->command == "update-config");
  CHECK(back->user == "ops@host");
}

TEST_CASE("revision::parse leaves out what is not a revision of the baseline") {
  CHECK_FALSE(revision::parse(json::object{{"data", {{"user_config.json", "{}"}}}}));  // no revision number
  CHECK_FALSE(revision::parse(json::object{{"revision", 1}, {"data", {{"other", "x"}}}}));
  CHECK_FALSE(revision::parse(json::object{{"revision", "1"}, {"data", {{"user_config.json", "{}"}}}}));
}

TEST_CASE("revision::from_items sorts by number; to_prune keeps the newest `limit`") {
  json::array items;
  for (int n : {3, 1, 12, 2}) {
    const auto content = revision::content_of(baseline::read_baseline(config_map("{}"), "team-a"));
    items.push_back(revision::render(config_map("{}"), n, *content, {"deploy", "ops@host", 0}));
  }
  items.push_back(json::object{{"kind", "ControllerRevision"}});  // someone else's: left out
  const auto sorted = revision::from_items(items);
  REQUIRE(sorted.size() == 4);
  CHECK(sorted.front().name == "motor-config-1");
  CHECK(sorted.back().name == "motor-config-12");  // by number, not by name
  CHECK(revision::to_prune(sorted, 2) == std::vector<std::string>{"motor-config-1", "motor-config-2"});
  CHECK(revision::to_prune(sorted, 10).empty());
}

TEST_CASE("revision::changes names the user_config.json paths and the files that differ") {
  const auto first = listed(1, R"({"motor_deploy_config":{"p_instances_num":1,"d_instances_num":1}})");
  const auto scaled = listed(2, R"({"motor_deploy_config":{"p_instances_num":2,"d_instances_num":1}})");
  const auto env = listed(3, R"({"motor_deploy_config":{"p_instances_num":2,"d_instances_num":1}})", "{}");
  CHECK(revision::changes(nullptr, first) == std::vector<std::string>{"(first recorded)"});
  CHECK(revision::changes(&first, scaled) == std::vector<std::string>{"motor_deploy_config.p_instances_num"});
  CHECK(revision::changes(&scaled, env) == std::vector<std::string>{"env.json"});
  CHECK(revision::changes(&env, env).empty());
  // deploy_mode absent reads as its default, as update-config compares them.
  const auto explicit_mode = listed(
      4, R"({"motor_deploy_config":{"p_instances_num":2,"d_instances_num":1,"deploy_mode":"infer_service_set"}})",
      "{}");
  CHECK(revision::changes(&env, explicit_mode).empty());
}

TEST_CASE("revision::scripts_digest: key order and content count, no scripts is empty") {
  CHECK(revision::scripts_digest({}).empty());
  CHECK(revision::scripts_digest({{"a", "1"}, {"b", "2"}}) != revision::scripts_digest({{"a", "1"}, {"b", "3"}}));
  CHECK(revision::scripts_digest({{"a", "12"}}) != revision::scripts_digest({{"a1", "2"}}));
}

TEST_CASE("revision::plan_rollback: counts as scale, whitelisted settings as update-config, the rest as deploy") {
  const auto content = [](const std::string& user_config, std::optional<std::string> env = std::nullopt,
                          std::optional<std::string> overrides = std::nullopt) {
    return revision::Content{user_config, std::move(env), std::move(overrides), ""};
  };
  const std::string base = R"({"motor_deploy_config":{"p_instances_num":1,"image_name":"a"},)"
                           R"("motor_controller_config":{"logging_config":{"log_level":"INFO"}}})";
  const std::string scaled = R"({"motor_deploy_config":{"p_instances_num":2,"image_name":"a"},)"
                             R"("motor_controller_config":{"logging_config":{"log_level":"INFO"}}})";
  const std::string scaled_debug = R"({"motor_deploy_config":{"p_instances_num":2,"image_name":"a"},)"
                                   R"("motor_controller_config":{"logging_config":{"log_level":"DEBUG"}}})";
  const std::string image = R"({"motor_deploy_config":{"p_instances_num":1,"image_name":"b"},)"
                            R"("motor_controller_config":{"logging_config":{"log_level":"INFO"}}})";

  auto plan = revision::plan_rollback(content(scaled), content(base));
  CHECK(plan.counts);
  CHECK_FALSE(plan.settings);
  CHECK_FALSE(plan.redeploy);
  plan = revision::plan_rollback(content(scaled_debug), content(base));  // after scale + update-config
  CHECK(plan.counts);
  CHECK(plan.settings);
  CHECK_FALSE(plan.redeploy);
  plan = revision::plan_rollback(content(base), content(base, "{}"));  // env.json alone: update-config's
  CHECK(plan.settings);
  plan = revision::plan_rollback(content(image), content(base));
  CHECK_FALSE(plan.counts);
  CHECK_FALSE(plan.settings);
  CHECK(plan.redeploy);
  CHECK(plan.redeploy_paths == std::vector<std::string>{"motor_deploy_config.image_name"});
  plan = revision::plan_rollback(content(base), content(base, std::nullopt, "roles: {}\n"));
  CHECK(plan.redeploy_paths == std::vector<std::string>{"overrides.yaml"});
  // What a revision cannot give back is kept, and said.
  plan = revision::plan_rollback(content(base, "{}", "roles: {}\n"), content(base));
  CHECK_FALSE(plan.redeploy);
  CHECK(plan.kept.size() == 2);
  revision::Content other_scripts = content(base);
  other_scripts.scripts_digest = "d";
  CHECK(revision::plan_rollback(other_scripts, content(base)).kept.size() == 1);
  // deploy_mode: only delete + deploy.
  const std::string multi = R"({"motor_deploy_config":{"p_instances_num":1,"deploy_mode":"multi_deployment"}})";
  plan = revision::plan_rollback(content(multi), content(base));
  CHECK(plan.refusal == "motor_deploy_config.deploy_mode multi_deployment → infer_service_set");
  CHECK(revision::plan_rollback(content(base), content("[]")).refusal ==
        "a user_config.json that is not a JSON object");
}
