// Ready means current (issue 31): rollout::pending as kubectl rollout status judges a Deployment or StatefulSet,
// rollout::rolled_by, and build_report counting an instance ready only when its workload runs the role's current
// template and has rolled out: infer_service_set instances on an earlier template, multi_deployment Deployments
// whose surge pod cannot be scheduled.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "config_test_support.h"
#include "mindie/render.h"
#include "mindie/rollout.h"
#include "mindie/status_report.h"
#include "mindie/status_view.h"

namespace json = boost::json;
using namespace mindie;

namespace {

const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
constexpr const char* kCreated = "2027-01-15T07:55:00Z";
constexpr const char* kNoRoom =
    "0/6 nodes are available: 2 Insufficient huawei.com/Ascend910, 4 node(s) didn't match Pod's node "
    "affinity/selector.";

json::value at(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* p = &v;
  for (auto k : path) p = &p->as_object().at(k);
  return *p;
}

/// A Deployment as the deployment controller reports it: `generation` observed or not, pod counts.
json::object deployment(std::int64_t generation, std::int64_t observed, std::int64_t replicas, std::int64_t pods,
                        std::int64_t updated) {
  return {{"metadata", {{"name", "vllm-p0"}, {"generation", generation}}},
          {"spec", {{"replicas", replicas}}},
          {"status", {{"observedGeneration", observed}, {"replicas", pods}, {"updatedReplicas", updated}}}};
}

/// A StatefulSet as the statefulset controller reports it.
json::object stateful_set(std::int64_t generation, std::int64_t observed, const std::string& current,
                          const std::string& update) {
  return {{"metadata", {{"name", "x-0-prefill-0"}, {"generation", generation}}},
          {"spec", {{"replicas", 2}}},
          {"status",
           {{"observedGeneration", observed},
            {"updatedReplicas", 1},
            {"currentRevision", current},
            {"updateRevision", update}}}};
}

/// A pod with `labels`, ready or not yet scheduled (the scheduler's PodScheduled=False with `message`).
json::object pod(const std::string& name, const json::value& labels, bool scheduled, const std::string& message = "") {
  json::object p{{"metadata", {{"name", name}, {"creationTimestamp", kCreated}, {"labels", labels}}},
                 {"spec", {{"containers", json::array{{{"name", "c"}}}}}}};
  if (scheduled) {
    p["spec"].as_object()["nodeName"] = "atlas-800i-a2-0";
    p["status"] = {{"phase", "Running"},
                   {"conditions", json::array{{{"type", "PodScheduled"}, {"status", "True"}},
                                              {{"type", "Ready"}, {"status", "True"}}}},
                   {"containerStatuses", json::array{{{"name", "c"}, {"ready", true}, {"state", {{"running", {}}}}}}}};
  } else {
    p["status"] = {
        {"phase", "Pending"},
        {"conditions",
         json::array{
             {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}, {"message", message}}}}};
  }
  return p;
}

std::string joined(const json::value& lines) {
  std::string out;
  for (const auto& l : lines.as_array()) out += std::string(l.as_string()) + "\n";
  return out;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

const json::object& role_of(const json::object& report, const std::string& name) {
  for (const auto& r : report.at("roles").as_array())
    if (r.at("name").as_string() == name) return r.as_object();
  FAIL("no role " << name);
  throw 0;
}

/// A multi_deployment of valid_config() as live: motor-config, every Deployment observed and rolled out, one ready pod
/// each.
status::StatusInputs multi_live() {
  auto cfg = test::valid_config();
  test::deploy_of(cfg)["deploy_mode"] = "multi_deployment";
  const auto objects = render::render_multi_deployment(test::parse(cfg), nullptr, {});
  status::StatusInputs in;
  in.config_map = objects.front();
  for (const auto& o : objects) {
    if (o.at("kind") != "Deployment") continue;
    json::object d = o;
    d["metadata"].as_object()["generation"] = 1;
    d["status"] = {{"observedGeneration", 1}, {"replicas", 1}, {"updatedReplicas", 1}, {"readyReplicas", 1}};
    const json::value labels = at(d, {"spec", "template", "metadata", "labels"});
    in.pods.push_back(pod(std::string(d["metadata"].at("name").as_string()) + "-old", labels, true));
    in.deployments.push_back(std::move(d));
  }
  return in;
}

/// The live Deployment of `in` named `name`.
json::object& live_deployment(status::StatusInputs& in, const std::string& name) {
  for (auto& d : in.deployments)
    if (d.at("metadata").at("name").as_string() == name) return d.as_object();
  FAIL("no deployment " << name);
  throw 0;
}

/// An infer_service_set of valid_config() as live (observed), every role's instance 0 a StatefulSet made from the
/// role's template and rolled out, its pod ready; `gang_decode`: decode runs 2 pods per instance, gang-scheduled.
status::StatusInputs set_live(bool gang_decode = false) {
  auto cfg = test::valid_config();
  if (gang_decode) test::deploy_of(cfg)["single_d_instance_pod_num"] = 2;
  const auto objects = render::render_infer_service_set(test::parse(cfg), nullptr, {});
  status::StatusInputs in;
  in.config_map = objects.front();
  json::object iss = objects.back();
  iss["metadata"].as_object()["generation"] = 1;
  iss["status"] = {{"observedGeneration", 1}};
  for (const auto& r : iss.at("spec").at("template").at("roles").as_array()) {
    const std::string role(r.at("name").as_string());
    if (r.at("replicas").as_int64() == 0) continue;
    const json::object labels{{"infer.huawei.com/inferservice-name", "mindie-motor-vllm-0"},
                              {"infer.huawei.com/instanceset-name", role},
                              {"infer.huawei.com/instanceset-index", "0"}};
    const std::int64_t pods = r.at("spec").at("replicas").as_int64();
    json::object sts{{"kind", "StatefulSet"},
                     {"metadata",
                      {{"name", "mindie-motor-vllm-0-" + role + "-0"}, {"generation", 1}, {"labels", labels}}},
                     {"spec", {{"replicas", pods}, {"template", at(r, {"spec", "template"})}}},
                     {"status", {{"observedGeneration", 1}, {"currentRevision", "r1"}, {"updateRevision", "r1"}}}};
    in.workloads.push_back(status::slim_workload(sts, "StatefulSet"));
    for (std::int64_t i = 0; i < pods; ++i)
      in.pods.push_back(pod("mindie-motor-vllm-0-" + role + "-0-" + std::to_string(i), labels, true));
  }
  in.service_set = std::move(iss);
  return in;
}

/// The workload of `role` in `in`.
json::object& workload_of(status::StatusInputs& in, const std::string& role) {
  for (auto& w : in.workloads)
    if (w.at("metadata").at("name").as_string() == "mindie-motor-vllm-0-" + role + "-0") return w.as_object();
  FAIL("no workload of " << role);
  throw 0;
}

}  // namespace

TEST_CASE("every pod template the Deployment modes render carries its template hash, the same on every run") {
  auto cfg = test::valid_config();
  test::deploy_of(cfg)["deploy_mode"] = "multi_deployment";
  cfg["motor_engine_prefill_config"].as_object()["engine_config"] =
      json::parse(R"({"kv_transfer_config": {"kv_connector": "MultiConnector"}})");
  cfg["kv_cache_pool_config"] = json::parse(R"({"port": 50090, "eviction_high_watermark_ratio": 0.9,
                                                 "eviction_ratio": 0.1})");
  cfg["kv_conductor_config"] = json::parse(R"({"http_server_port": 13333})");
  auto single = test::valid_config();
  test::deploy_of(single)["deploy_mode"] = "single_container";
  for (const auto& doc : {cfg, single}) {
    const auto parsed = test::parse(doc);
    const bool multi = parsed.deploy_mode == config::DeployMode::MultiDeployment;
    const auto objects = multi ? render::render_multi_workloads(parsed, {})
                               : render::render_single_container_workloads(parsed, {});
    const auto again = multi ? render::render_multi_workloads(parsed, {})
                             : render::render_single_container_workloads(parsed, {});
    std::size_t deployments = 0;
    for (std::size_t i = 0; i < objects.size(); ++i) {
      if (objects[i].at("kind") != "Deployment") continue;
      ++deployments;
      const json::object& tpl = objects[i].at("spec").at("template").as_object();
      const json::value hash = at(tpl, {"metadata", "annotations", render::kTemplateHashAnnotation});
      CAPTURE(objects[i].at("metadata").at("name"));
      CHECK(hash == json::value(render::template_hash(tpl)));
      CHECK(at(again[i], {"spec", "template", "metadata", "annotations", render::kTemplateHashAnnotation}) == hash);
    }
    CHECK(deployments == (multi ? 6 : 1));  // controller, coordinator, p0, d0, kv-pool, kv-conductor
  }
}

TEST_CASE("rollout::pending: kubectl rollout status's rules for Deployments (availability left to the pods)") {
  CHECK(rollout::pending(deployment(2, 2, 1, 1, 1), "Deployment").empty());
  CHECK(rollout::pending(deployment(3, 2, 1, 1, 1), "Deployment") ==
        "the deployment controller has not observed generation 3 yet");
  // The surge pod made, the old one still there (maxSurge 1, maxUnavailable 0).
  CHECK(rollout::pending(deployment(2, 2, 1, 2, 1), "Deployment") == "1 pod of an earlier template still running");
  CHECK(rollout::pending(deployment(2, 2, 4, 5, 2), "Deployment") ==
        "2 of 4 on the current template, 3 pods of an earlier template still running");
  auto stuck = deployment(2, 2, 1, 2, 1);
  stuck["status"].as_object()["conditions"] =
      json::array{{{"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}}};
  CHECK(rollout::pending(stuck, "Deployment") ==
        "1 pod of an earlier template still running (the rollout exceeded its progress deadline)");
  CHECK(rollout::pending(deployment(2, 2, 1, 2, 1), "ReplicaSet").empty());
}

TEST_CASE("rollout::pending: StatefulSets roll out when currentRevision == updateRevision, once observed") {
  CHECK(rollout::pending(stateful_set(1, 1, "r1", "r1"), "StatefulSet").empty());
  CHECK(rollout::pending(stateful_set(1, 0, "r1", "r1"), "StatefulSet") ==
        "the statefulset controller has not observed generation 1 yet");
  CHECK(rollout::pending(stateful_set(2, 2, "r1", "r2"), "StatefulSet") ==
        "1 of 2 on the current template (revision r2)");
}

TEST_CASE("rollout::rolled_by: live Deployments whose template hash the rendering changes, per role") {
  auto cfg = test::valid_config();
  test::deploy_of(cfg)["deploy_mode"] = "multi_deployment";
  const auto before = render::render_multi_deployment(test::parse(cfg), nullptr, {});
  test::deploy_of(cfg)["image_name"] = "mindie:next";
  test::deploy_of(cfg)["p_instances_num"] = 2;
  const auto after = render::render_multi_deployment(test::parse(cfg), nullptr, {});
  json::array live;
  for (const auto& o : before)
    if (o.at("kind") == "Deployment") live.push_back(o);
  const auto rolled = rollout::rolled_by(after, live);
  // Every live Deployment runs the image; the new prefill instance is not live, so not rolled.
  CHECK(rolled.at("prefill") == std::vector<std::string>{"deployment/vllm-p0"});
  CHECK(rolled.at("decode") == std::vector<std::string>{"deployment/vllm-d0"});
  CHECK(rollout::rolled_by(before, live).empty());
}

TEST_CASE("multi_deployment: rolled out Deployments are current and ready") {
  const auto report = status::build_report("team-a", multi_live(), kNow).to_json();
  CHECK_MESSAGE(report.at("ready").as_bool(), joined(report.at("unready")));
  const auto& prefill = role_of(report, "prefill");
  CHECK(prefill.at("instancesOnCurrentTemplate") == 1);
  CHECK(prefill.at("instancesOnOtherTemplates") == 0);
  CHECK(prefill.at("instances").as_array()[0].at("current") == true);
  CHECK(prefill.at("instances").as_array()[0].at("templateHash").is_string());
}

// Issue 31: on a full NPU pool the surge pod of a changed engine Deployment stays Pending for ever and the old pod
// keeps the old image, while status said "Ready ... live state matches the baseline" (updatedReplicas unused).
TEST_CASE("multi_deployment: a rollout whose surge pod cannot be scheduled is not ready, its reason said once") {
  auto in = multi_live();
  auto& p0 = live_deployment(in, "vllm-p0");
  p0["metadata"].as_object()["generation"] = 2;
  p0["status"] = {{"observedGeneration", 2}, {"replicas", 2}, {"updatedReplicas", 1}, {"readyReplicas", 1}};
  in.pods.push_back(pod("vllm-p0-new", at(p0, {"spec", "template", "metadata", "labels"}), false, kNoRoom));
  const auto typed = status::build_report("team-a", in, kNow);
  const auto report = typed.to_json();
  CHECK_FALSE(report.at("ready").as_bool());
  const auto& prefill = role_of(report, "prefill");
  CHECK(prefill.at("healthy") == false);
  CHECK(prefill.at("readyInstances") == 0);
  CHECK(prefill.at("instancesOnOtherTemplates") == 1);
  CHECK(prefill.at("rolloutUnschedulable") == json::array{kNoRoom});
  const auto& inst = prefill.at("instances").as_array()[0];
  CHECK(inst.at("current") == false);
  CHECK(inst.at("rollout") == "1 pod of an earlier template still running");
  const std::string unready = joined(report.at("unready"));
  CHECK_MESSAGE(unready.find("role prefill: 1 of 1 instances still run pods of an earlier pod template, their "
                             "rollout not complete: deployment/vllm-p0 (1 pod of an earlier template still running); "
                             "a rolling update starts each new pod before it stops an old one (maxSurge), and the new "
                             "pods cannot be scheduled: 0/6 nodes are available") != std::string::npos,
                unready);
  CHECK_MESSAGE(count_of(unready, kNoRoom) == 1, unready);
  CHECK(role_of(report, "decode").at("healthy") == true);
  CHECK(report.at("deployments").as_array()[2].at("oldReplicas") == 1);  // controller, coordinator, vllm-p0, ...
  const std::string table = status::render_table(typed, false);
  CHECK(table.find("OutOfDate") != std::string::npos);
  CHECK(table.find("Not ready") != std::string::npos);

  SUBCASE("once the old pod is gone and the new one ready, it is current and ready again") {
    p0["status"] = {{"observedGeneration", 2}, {"replicas", 1}, {"updatedReplicas", 1}, {"readyReplicas", 1}};
    in.pods.back() = pod("vllm-p0-new", at(p0, {"spec", "template", "metadata", "labels"}), true);
    in.pods.erase(in.pods.begin() + 2);  // vllm-p0-old
    const auto r = status::build_report("team-a", in, kNow).to_json();
    CHECK_MESSAGE(r.at("ready").as_bool(), joined(r.at("unready")));
    CHECK(role_of(r, "prefill").at("instancesOnCurrentTemplate") == 1);
  }
  SUBCASE("a change the deployment controller has not observed yet is not current either") {
    p0["status"] = {{"observedGeneration", 1}, {"replicas", 1}, {"updatedReplicas", 1}, {"readyReplicas", 1}};
    in.pods.pop_back();
    const auto r = status::build_report("team-a", in, kNow).to_json();
    CHECK_FALSE(r.at("ready").as_bool());
    CHECK(role_of(r, "prefill").at("instances").as_array()[0].at("rollout") ==
          "the deployment controller has not observed generation 2 yet");
  }
}

// Issue 31: a new image_name changed the InferServiceSet, no pod got it (the operator never updates a running
// instance's workload), and wait said ready.
TEST_CASE("infer_service_set: an instance on an earlier template is not ready; the role names it and what to do") {
  auto in = set_live();
  CHECK(status::build_report("team-a", in, kNow).ready);
  workload_of(in, "prefill")["spec"].as_object()["template"] = {
      {"metadata", {{"annotations", {{render::kTemplateHashAnnotation, "0123456789abcdef"}}}}}};
  const auto report = status::build_report("team-a", in, kNow).to_json();
  CHECK_FALSE(report.at("ready").as_bool());
  const auto& prefill = role_of(report, "prefill");
  CHECK(prefill.at("readyInstances") == 0);
  CHECK(prefill.at("instancesOnOtherTemplates") == 1);
  CHECK(prefill.at("instances").as_array()[0].at("current") == false);
  const std::string unready = joined(report.at("unready"));
  CHECK_MESSAGE(unready.find("role prefill: 1 of 1 instances run an earlier pod template than spec.template.roles[2] "
                             "(statefulset/mindie-motor-vllm-0-prefill-0): infer-operator never updates an existing "
                             "instance's workload; replace it with kubectl mindie rollout restart -n ") !=
                    std::string::npos,
                unready);
  CHECK(joined(report.at("drift")).find("earlier pod template") == std::string::npos);

  SUBCASE("a StatefulSet whose own rolling update is not complete is not current") {
    auto again = set_live();
    workload_of(again, "decode")["status"].as_object()["updateRevision"] = "r2";
    const auto r = status::build_report("team-a", again, kNow).to_json();
    CHECK_FALSE(r.at("ready").as_bool());
    CHECK(joined(r.at("unready"))
              .find("role decode: 1 of 1 instances still run pods of an earlier pod template, "
                    "their rollout not complete: statefulset/mindie-motor-vllm-0-decode-0 (0 of "
                    "1 on the current template (revision r2))") != std::string::npos);
  }
}

// Issue 29 found that deleting a gang instance's workload starts infer-operator's rebuild loop: never advised.
TEST_CASE("infer_service_set: a gang instance on an earlier template is not ready and never told to be deleted") {
  auto in = set_live(true);
  workload_of(in, "decode")["spec"].as_object()["template"] = json::object{};
  const auto report = status::build_report("team-a", in, kNow).to_json();
  CHECK_FALSE(report.at("ready").as_bool());
  const std::string unready = joined(report.at("unready"));
  CHECK(unready.find("role decode: 1 of 1 instances run an earlier pod template") != std::string::npos);
  CHECK(unready.find("do not delete a gang instance's workload") != std::string::npos);
  CHECK(unready.find("kubectl delete") == std::string::npos);
}

// rollout restart --stop-operator must not stop infer-operator before it copied a changed role template into the
// InstanceSets (inferservice_controller.go updateExistInstanceSets): started again, it makes workloads from theirs.
TEST_CASE("infer_service_set: InstanceSets not yet given their role's current pod template are named") {
  auto in = set_live();
  json::object decode;
  for (const auto& r : in.service_set->at("spec").at("template").at("roles").as_array())
    if (r.at("name") == "decode") decode = r.as_object();
  const json::object labels{{"infer.huawei.com/inferservice-name", "mindie-motor-vllm-0"},
                            {"infer.huawei.com/instanceset-name", "decode"},
                            {render::kPrioritySchedulingLabel, "Parallel"}};
  in.instance_sets.push_back(json::object{{"kind", "InstanceSet"},
                                          {"metadata", {{"name", "mindie-motor-vllm-0-decode"}, {"labels", labels}}},
                                          {"spec", decode}});
  const auto lagging = [&] {
    for (const auto& role : status::build_report("team-a", in, kNow).roles)
      if (role.name == "decode") return role.instance_sets_on_other_templates;
    FAIL("no role decode");
    return std::vector<std::string>{};
  };
  CHECK(lagging().empty());
  in.instance_sets.back().as_object()["spec"].as_object()["spec"].as_object()["template"] = {
      {"metadata", {{"annotations", {{render::kTemplateHashAnnotation, "0123456789abcdef"}}}}}};
  CHECK(lagging() == std::vector<std::string>{"mindie-motor-vllm-0-decode"});
  // One being deleted is never updated: not waited for.
  in.instance_sets.back().as_object()["metadata"].as_object()["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  CHECK(lagging().empty());
}
