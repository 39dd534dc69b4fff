// What deploy removes after writing a multi_deployment / single_container deployment (cmd/multi_deployment.h), against
// the in-memory transport: labelled objects the rendering no longer has, among them the Services PyMotor 7d15c04
// renamed (§U6), and a warning for a renamed Service that is not this deployment's.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "cmd/multi_deployment.h"
#include "config_test_support.h"
#include "fake_transport.h"
#include "mindie/render.h"

using mindie::kube::Client;
using mindie::test::FakeTransport;
namespace json = boost::json;

namespace {

// A list of objects `names` carrying deployment mindie-motor-vllm's labels (`role` as component).
std::string labelled(const char* kind, std::initializer_list<std::pair<const char*, const char*>> names) {
  json::array items;
  for (const auto& [name, role] : names)
    items.push_back(json::object{{"metadata",
                                  {{"name", name},
                                   {"labels",
                                    {{mindie::render::kManagedByLabel, "kubectl-mindie"},
                                     {mindie::render::kInstanceLabel, "mindie-motor-vllm"},
                                     {mindie::render::kComponentLabel, role}}}}}});
  return json::serialize(json::object{{"kind", kind}, {"metadata", {{"resourceVersion", "3"}}}, {"items", items}});
}

// The (resource, name) pairs of what `cfg` renders, as deploy collects them.
std::set<std::pair<std::string, std::string>> wanted_of(const mindie::config::UserConfig& cfg) {
  std::set<std::pair<std::string, std::string>> wanted;
  for (const auto& o : mindie::render::render_multi_deployment(cfg, nullptr, {})) {
    const std::string kind(o.at("kind").as_string());
    const std::string resource = kind == "Deployment" ? "deployments" : kind == "Service" ? "services" : "other";
    wanted.emplace(resource, std::string(o.at("metadata").at("name").as_string()));
  }
  return wanted;
}

}  // namespace

TEST_CASE("a redeploy over the old Service names removes the old kubectl-mindie ones (multi_deployment)") {
  auto raw = mindie::test::valid_config();
  mindie::test::deploy_of(raw)["deploy_mode"] = "multi_deployment";
  const auto cfg = mindie::test::parse(raw);
  FakeTransport t;
  Client c(t);
  // Live: what the release before §U6 rendered.
  t.reply(200, labelled("DeploymentList", {{"mindie-motor-controller", "controller"},
                                           {"mindie-motor-coordinator", "coordinator"},
                                           {"vllm-d0", "decode"},
                                           {"vllm-p0", "prefill"}}));
  t.reply(200, labelled("ServiceList", {{"mindie-motor-controller-service", "controller"},
                                        {"mindie-motor-coordinator-infer", "coordinator"},
                                        {"mindie-motor-coordinator-service", "coordinator"}}));
  const auto stale = mindie::cmd::stale_workload_objects(c, "team-a", "mindie-motor-vllm", wanted_of(cfg));
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].gvr == &mindie::kube::gvr::kServices);
  CHECK(stale[0].name == "mindie-motor-coordinator-service");
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[1].path.find("/api/v1/namespaces/team-a/services?") == 0);
  CHECK(t.requests[1].path.find("app.kubernetes.io%2Finstance%3Dmindie-motor-vllm") != std::string::npos);

  // The old Service is ours (the labels the prune selects by): no warning.
  {
    FakeTransport t2;
    Client c2(t2);
    json::object svc = json::parse(labelled("ServiceList", {{"mindie-motor-coordinator-service", "coordinator"}}))
                           .at("items")
                           .at(0)
                           .as_object();
    t2.reply(200, json::serialize(svc));
    CHECK(
        mindie::cmd::foreign_renamed_services(c2, "team-a", "mindie-motor-vllm", mindie::render::renamed_services(cfg))
            .empty());
    REQUIRE(t2.requests.size() == 1);
    CHECK(t2.requests[0].method == "GET");
    CHECK(t2.requests[0].path == "/api/v1/namespaces/team-a/services/mindie-motor-coordinator-service");
  }
}

TEST_CASE("an old-named Service that is not this deployment's is left, with one warning line") {
  auto raw = mindie::test::valid_config();
  mindie::test::deploy_of(raw)["deploy_mode"] = "multi_deployment";
  const auto cfg = mindie::test::parse(raw);
  FakeTransport t;
  Client c(t);
  // deploy.py's: no kubectl-mindie labels.
  t.reply(200, R"({"kind":"Service","metadata":{"name":"mindie-motor-coordinator-service","namespace":"team-a",)"
               R"("labels":{"app":"mindie-motor-coordinator"}}})");
  const auto warnings = mindie::cmd::foreign_renamed_services(c, "team-a", "mindie-motor-vllm",
                                                              mindie::render::renamed_services(cfg));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find('\n') == std::string::npos);
  CHECK(warnings[0].find("service/mindie-motor-coordinator-service in namespace team-a") == 0);
  CHECK(warnings[0].find("service/mindie-motor-coordinator-mgmt") != std::string::npos);
  CHECK(warnings[0].find("kubectl delete service -n team-a mindie-motor-coordinator-service") != std::string::npos);

  // None there: nothing to say.
  t.reply(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"not found"})");
  CHECK(mindie::cmd::foreign_renamed_services(c, "team-a", "mindie-motor-vllm", mindie::render::renamed_services(cfg))
            .empty());

  // single_container: the old "<job_id>-single-container" Service; the Deployment of that name is wanted.
  auto single_raw = mindie::test::valid_config();
  mindie::test::deploy_of(single_raw)["deploy_mode"] = "single_container";
  const auto single = mindie::test::parse(single_raw);
  std::set<std::pair<std::string, std::string>> wanted;
  for (const auto& o : mindie::render::render_single_container(single, nullptr, {})) {
    const std::string kind(o.at("kind").as_string());
    wanted.emplace(kind == "Deployment" ? "deployments"
                   : kind == "Service"  ? "services"
                                        : "other",
                   std::string(o.at("metadata").at("name").as_string()));
  }
  t.reply(200, labelled("DeploymentList", {{"team-a-single-container", "single-container"}}));
  t.reply(200, labelled("ServiceList", {{"team-a-coordinator-service", "single-container"},
                                        {"team-a-single-container", "single-container"}}));
  const auto stale = mindie::cmd::stale_workload_objects(c, "team-a", "mindie-motor-vllm", wanted);
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].gvr == &mindie::kube::gvr::kServices);
  CHECK(stale[0].name == "team-a-single-container");
}
