// baseline::read_baseline: what deploy records on motor-config, read once for every command; what is unusable is
// kept as a problem and thrown only by the accessor that needs it.
#include "mindie/baseline.h"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "config_test_support.h"
#include "mindie/render.h"

using namespace mindie;
namespace json = boost::json;

namespace {

/// motor-config as deploy renders it for test::valid_config() with an env.json, overrides and a script.
json::object rendered_config_map() {
  const auto cfg = config::parse_user_config(json::serialize(test::valid_config()), "user_config.json");
  const auto env = config::parse_env_config(R"({"motor_common_env":{"A":"1"}})", "env.json");
  render::RenderOptions opts;
  opts.service_id = "team-a_20260101";
  opts.overrides = overrides::parse_overrides("roles: {}\n", "overrides.yaml");
  opts.scripts["engine.sh"] = "#!/bin/sh\n";
  return render::render_config_map(cfg, &env, opts);
}

}  // namespace

TEST_CASE("read_baseline: a rendered motor-config reads back whole") {
  const auto b = baseline::read_baseline(rendered_config_map(), "team-a");
  CHECK(b.where == "configmap/motor-config in namespace team-a");
  REQUIRE(b.config);
  CHECK(b.problem.empty());
  CHECK(b.user().job_id == "team-a");
  CHECK(b.raw == b.config->raw);
  CHECK(b.deploy_mode() == "infer_service_set");
  CHECK_FALSE(b.runs_deployments());
  CHECK(b.workload_name() == "mindie-motor-vllm");
  CHECK(b.service_id == "team-a_20260101");
  REQUIRE(b.env());
  CHECK(b.env()->raw == R"({"motor_common_env":{"A":"1"}})");
  CHECK(b.overrides_raw == "roles: {}\n");
  CHECK(b.scripts.count("engine.sh") == 1);
  CHECK(b.scripts.count("user_config.json") == 0);
  CHECK(b.scripts.count("env.json") == 0);
}

TEST_CASE("read_baseline: a ConfigMap of another tool, or a broken user_config.json, is a problem, not a throw") {
  json::object cm{{"metadata", {{"name", "motor-config"}}}, {"data", {{"other", "x"}}}};
  auto b = baseline::read_baseline(cm, "team-a");
  CHECK_FALSE(b.config);
  CHECK(b.problem.find("has no data key user_config.json: it is not a kubectl-mindie baseline") != std::string::npos);
  CHECK_THROWS_WITH_AS(b.user(), doctest::Contains("not a kubectl-mindie baseline"), baseline::BaselineError);
  CHECK_THROWS_AS(b.deploy_mode(), baseline::BaselineError);
  CHECK(b.deploy_mode_if_known().empty());
  CHECK_THROWS_WITH_AS(b.workload_name(), doctest::Contains("holds no usable baseline and no valid"),
                       baseline::BaselineError);

  cm["data"].as_object()["user_config.json"] = "{\"version\": 1}";
  cm["metadata"].as_object()["annotations"] = {{"kubectl-mindie/deploy-mode", "multi_deployment"},
                                               {"kubectl-mindie/infer-service-set", "demo"}};
  b = baseline::read_baseline(cm, "team-a");
  CHECK_FALSE(b.config);
  CHECK(b.raw == "{\"version\": 1}");
  CHECK(b.problem.rfind("the baseline is not usable: ", 0) == 0);
  // The annotations still say what runs, so status can show it.
  CHECK(b.deploy_mode() == "multi_deployment");
  CHECK(b.runs_deployments());
  CHECK(b.workload_name() == "demo");
}

TEST_CASE("read_baseline: a hand-edited workload name never reaches a request path; mistyped fields are ignored") {
  json::object cm = rendered_config_map();
  cm["metadata"].as_object()["annotations"].as_object()["kubectl-mindie/infer-service-set"] = "../../secrets";
  CHECK_THROWS_WITH_AS(baseline::read_baseline(cm, "team-a").workload_name(),
                       doctest::Contains("is not a valid InferServiceSet name: \"../../secrets\""),
                       baseline::BaselineError);
  cm["metadata"].as_object()["annotations"] = json::array{1, 2};
  cm["data"].as_object()["env.json"] = 7;
  const auto b = baseline::read_baseline(cm, "team-a");
  CHECK(b.recorded_mode.empty());
  CHECK(b.service_id.empty());
  CHECK_FALSE(b.env_raw);
  CHECK(b.deploy_mode() == "infer_service_set");
  CHECK(baseline::read_baseline(json::object{}, "x").problem.find("has no data key") != std::string::npos);
}

TEST_CASE("data_digest: the SHA-256 of the keys in order, whatever order the server sends them in") {
  const json::object a{{"user_config.json", "{}"}, {"env.json", "[]"}};
  const json::object b{{"env.json", "[]"}, {"user_config.json", "{}"}};
  CHECK(baseline::data_digest(a) == baseline::data_digest(b));
  CHECK(baseline::data_digest(a).size() == 64);
  // Moving a byte between a key and its value, or between two values, changes it.
  CHECK(baseline::data_digest({{"ab", "c"}}) != baseline::data_digest({{"a", "bc"}}));
  CHECK(baseline::data_digest({{"a", "x"}, {"b", ""}}) != baseline::data_digest({{"a", ""}, {"b", "x"}}));
  // The empty data: SHA-256 of nothing.
  CHECK(baseline::data_digest({}) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
