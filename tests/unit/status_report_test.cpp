// status::build_report (its JSON form) and its views: grouping by the operator's labels, health (master/standby,
// HPA), reasons in plain words for every pod state the kubelet and scheduler report, drift between baseline, spec
// and the operator's InstanceSets; and wait's --timeout durations.
#include "mindie/status_report.h"

#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <sstream>

#include "cmd/wait.h"
#include "config_test_support.h"
#include "mindie/render.h"
#include "mindie/status_view.h"

namespace json = boost::json;
using namespace mindie;

namespace {

const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));  // 2027-01-15T08:00:00Z
constexpr const char* kCreated = "2027-01-15T07:55:00Z";                                       // 5m before kNow

/// A report as scripts read it (Report::to_json), keeping the typed report for the views.
struct Built : json::object {
  status::Report typed;
};

Built build(const std::string& ns, const status::StatusInputs& in, std::chrono::system_clock::time_point now) {
  Built b;
  b.typed = status::build_report(ns, in, now);
  static_cast<json::object&>(b) = b.typed.to_json();
  return b;
}

std::string view(const Built& report, bool wide) { return status::render_table(report.typed, wide); }

/// The rendered objects of a config: [0] motor-config, [4] the InferServiceSet (observed by the operator).
struct Deployed {
  json::object cm;
  json::object iss;
};

Deployed deployed(const json::object& cfg_doc) {
  const auto cfg = test::parse(cfg_doc);
  auto objects = render::render_infer_service_set(cfg, nullptr, {});
  Deployed d{objects.front(), objects.back()};
  d.iss["metadata"].as_object()["generation"] = 1;
  d.iss["status"] = {{"observedGeneration", 1}};
  return d;
}

json::object ready_pod(const std::string& role, int instance, int ordinal = 0, bool ready = true) {
  const std::string name = "mindie-motor-vllm-0-" + role + "-" + std::to_string(instance) + "-" +
                           std::to_string(ordinal);
  return json::parse(R"({"metadata":{"name":")" + name + R"(","creationTimestamp":")" + kCreated +
                     R"(","labels":{"infer.huawei.com/inferservice-name":"mindie-motor-vllm-0",
                        "infer.huawei.com/instanceset-name":")" +
                     role + R"(",
                        "infer.huawei.com/instanceset-index":")" +
                     std::to_string(instance) + R"("}},
      "spec":{"nodeName":"node-1","containers":[{"name":"c","resources":{"limits":{"huawei.com/Ascend910":"8"}}}]},
      "status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True"},
                                                 {"type":"Ready","status":")" +
                     (ready ? "True" : "False") + R"("}],
        "containerStatuses":[{"name":"c","ready":)" +
                     (ready ? "true" : "false") + R"(,"restartCount":0,
                              "state":{"running":{}}}]}})")
      .as_object();
}

status::StatusInputs all_ready(const Deployed& d) {
  status::StatusInputs in;
  in.config_map = d.cm;
  in.service_set = d.iss;
  for (const char* role : {"controller", "coordinator", "prefill", "decode"}) in.pods.push_back(ready_pod(role, 0));
  return in;
}

const json::object& role_of(const json::object& report, const std::string& name) {
  for (const auto& r : report.at("roles").as_array())
    if (r.at("name").as_string() == name) return r.as_object();
  FAIL("no role " << name);
  throw 0;
}

json::object& container_status(json::object& pod) {
  return pod["status"].as_object()["containerStatuses"].as_array()[0].as_object();
}

std::string unready_text(const json::object& report) { return json::serialize(report.at("unready")); }

/// The valid config with a master/standby controller, every pod ready but the standby (as only the master passes
/// readiness).
status::StatusInputs master_standby_inputs() {
  auto cfg = test::valid_config();
  cfg["motor_controller_config"] = json::parse(R"({"standby_config":{"enable_master_standby":true}})");
  auto in = all_ready(deployed(cfg));
  in.pods.push_back(ready_pod("controller", 0, 1, /*ready=*/false));
  return in;
}

}  // namespace

TEST_CASE("a healthy deployment is ready, with its tree, ages and NPUs") {
  const auto d = deployed(test::valid_config());
  const auto report = build("team-a", all_ready(d), kNow);
  CHECK(report.at("ready").as_bool());
  CHECK(report.at("drift").as_array().empty());
  CHECK(report.at("unready").as_array().empty());
  const auto& prefill = role_of(report, "prefill");
  CHECK(prefill.at("readyInstances").as_int64() == 1);
  const auto& pod = prefill.at("instances").as_array()[0].at("pods").as_array()[0].as_object();
  CHECK(pod.at("ageSeconds").as_int64() == 300);
  CHECK(pod.at("npus").as_int64() == 8);
  CHECK(pod.at("readyContainers").as_int64() == 1);
  const std::string table = view(report, true);
  CHECK(table.find("└── inferservice/mindie-motor-vllm-0") != std::string::npos);
  CHECK(table.find("mindie-motor-vllm-0-prefill-0-0") != std::string::npos);
  CHECK(table.find("5m") != std::string::npos);
  CHECK(table.find("node-1") != std::string::npos);
  CHECK(table.find("live state matches the baseline") != std::string::npos);
}

TEST_CASE("the tree's columns line up whatever the box-drawing prefix (display width, not bytes)") {
  const auto d = deployed(test::valid_config());
  const std::string table = view(build("team-a", all_ready(d), kNow), false);
  // Every pod row has its READY cell ("1/1") at the column of the tree header's READY.
  const auto column_of = [](const std::string& line, const std::string& needle) {
    const auto at = line.find(needle);
    std::size_t cps = 0;
    for (std::size_t i = 0; i < at; ++i) cps += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
    return cps;
  };
  std::istringstream lines(table);
  std::string line;
  std::size_t header = 0, rows = 0;
  while (std::getline(lines, line)) {
    if (line.find("STATUS") != std::string::npos && line.find("AGE") != std::string::npos) {
      header = column_of(line, "READY");
    } else if (header && line.find("mindie-motor-vllm-0-") != std::string::npos &&
               line.find("1/1") != std::string::npos) {
      CHECK_MESSAGE(column_of(line, "1/1") == header, line);
      ++rows;
    }
  }
  CHECK(rows == 4);
}

TEST_CASE("every pod state gets its reason in plain words") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  auto& pod = in.pods[2].as_object();  // prefill 0
  pod["status"].as_object()["conditions"].as_array()[1].as_object()["status"] = "False";
  container_status(pod)["ready"] = false;

  SUBCASE("unschedulable, with the scheduler's message") {
    pod["status"].as_object()["phase"] = "Pending";
    pod["status"].as_object()["conditions"].as_array()[0] =
        json::parse(R"({"type":"PodScheduled","status":"False","reason":"Unschedulable",
                        "message":"0/4 nodes are available: 4 Insufficient huawei.com/Ascend910."})");
    CHECK(unready_text(build("team-a", in, kNow)).find("unschedulable: 0/4 nodes are available") != std::string::npos);
    // issue 33: the scheduler's FailedScheduling event repeats the condition's message: said once.
    in.events.push_back(json::parse(R"({"type":"Warning","reason":"FailedScheduling",
        "message":"0/4 nodes are available: 4 Insufficient huawei.com/Ascend910.",
        "lastTimestamp":"2027-01-15T07:59:00Z","involvedObject":{"kind":"Pod","name":"mindie-motor-vllm-0-prefill-0-0"}})"));
    const std::string text = unready_text(build("team-a", in, kNow));
    CHECK(text.find("unschedulable: 0/4 nodes are available") != std::string::npos);
    CHECK(text.find("event FailedScheduling") == std::string::npos);
  }
  SUBCASE("image pull") {
    container_status(pod)["state"] = json::parse(R"({"waiting":{"reason":"ImagePullBackOff",
                                                   "message":"Back-off pulling image \"mindie:test\""}})");
    CHECK(unready_text(build("team-a", in, kNow)).find("cannot pull the image") != std::string::npos);
  }
  SUBCASE("crash loop, with the last exit") {
    container_status(pod)["state"] = json::parse(R"({"waiting":{"reason":"CrashLoopBackOff"}})");
    container_status(pod)["lastState"] = json::parse(R"({"terminated":{"reason":"Error","exitCode":1}})");
    container_status(pod)["restartCount"] = 4;
    const auto report = build("team-a", in, kNow);
    CHECK(unready_text(report).find("crash loop: 4 restarts, last exit Error (exit code 1)") != std::string::npos);
    CHECK(role_of(report, "prefill").at("restarts").as_int64() == 4);
  }
  SUBCASE("OOM kill") {
    container_status(pod)["state"] = json::parse(R"({"waiting":{"reason":"CrashLoopBackOff"}})");
    container_status(pod)["lastState"] = json::parse(R"({"terminated":{"reason":"OOMKilled","exitCode":137}})");
    CHECK(unready_text(build("team-a", in, kNow)).find("OOM-killed") != std::string::npos);
  }
  SUBCASE("stuck terminating") {
    pod["metadata"].as_object()["deletionTimestamp"] = "2027-01-15T07:30:00Z";
    const auto report = build("team-a", in, kNow);
    CHECK(unready_text(report).find("terminating since 2027-01-15T07:30:00Z") != std::string::npos);
    // The same text a minute later: status --watch must not report a change that is only the clock moving.
    CHECK(unready_text(build("team-a", in, kNow + std::chrono::minutes(1))) == unready_text(report));
    CHECK(view(report, false).find("Terminating") != std::string::npos);
  }
  SUBCASE("readiness failing, with the latest warning event") {
    in.events.push_back(json::parse(R"({"type":"Warning","reason":"Unhealthy","message":"old",
        "lastTimestamp":"2027-01-15T07:56:00Z","involvedObject":{"kind":"Pod","name":"mindie-motor-vllm-0-prefill-0-0"}})"));
    in.events.push_back(json::parse(R"({"type":"Warning","reason":"Unhealthy","message":"Readiness probe failed: 503",
        "lastTimestamp":"2027-01-15T07:59:00Z","involvedObject":{"kind":"Pod","name":"mindie-motor-vllm-0-prefill-0-0"}})"));
    in.events.push_back(json::parse(R"({"type":"Normal","reason":"Pulled","message":"normal news",
        "lastTimestamp":"2027-01-15T07:59:30Z","involvedObject":{"kind":"Pod","name":"mindie-motor-vllm-0-prefill-0-0"}})"));
    const auto report = build("team-a", in, kNow);
    const std::string text = unready_text(report);
    CHECK(text.find("(readiness probe failing); event Unhealthy: Readiness probe failed: 503") != std::string::npos);
    CHECK(text.find("normal news") == std::string::npos);
  }
  const auto report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("ready").as_bool());
  CHECK_FALSE(role_of(report, "prefill").at("healthy").as_bool());
  CHECK(role_of(report, "decode").at("healthy").as_bool());
}

TEST_CASE("master/standby control roles are healthy with one ready pod of two") {
  auto in = master_standby_inputs();
  const auto report = build("team-a", in, kNow);
  const auto& controller = role_of(report, "controller");
  CHECK(controller.at("masterStandby").as_bool());
  CHECK(controller.at("healthy").as_bool());
  CHECK(report.at("ready").as_bool());
  CHECK(report.at("unready").as_array().empty());
  CHECK(json::serialize(controller).find("standby (only the master passes readiness)") != std::string::npos);

  SUBCASE("but not with none ready") {
    in.pods[0] = ready_pod("controller", 0, 0, false);
    CHECK_FALSE(build("team-a", in, kNow).at("ready").as_bool());
  }
}

TEST_CASE("missing instances, removed instances' pods and an unobserved generation keep it not ready") {
  auto cfg = test::valid_config();
  test::deploy_of(cfg)["p_instances_num"] = 2;
  const auto d = deployed(cfg);
  auto in = all_ready(d);
  auto report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("ready").as_bool());
  CHECK(unready_text(report).find("role prefill instance 1: 0 of 1 pods exist") != std::string::npos);
  CHECK(role_of(report, "prefill").at("instances").as_array().size() == 2);

  in.pods.push_back(ready_pod("prefill", 1));
  CHECK(build("team-a", in, kNow).at("ready").as_bool());

  in.pods.push_back(ready_pod("decode", 3));  // a pod of an instance being scaled in
  report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("ready").as_bool());
  CHECK(unready_text(report).find("role decode instance 3: 1 pods of a removed instance still exist") !=
        std::string::npos);
  in.pods.pop_back();

  in.service_set->at("metadata").as_object()["generation"] = 2;
  report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("ready").as_bool());
  // The operator still catching up is work in flight, not a disagreement with the baseline.
  CHECK(json::serialize(report.at("converging")).find("has not observed generation 2") != std::string::npos);
  CHECK(report.at("drift").as_array().empty());
  CHECK(json::serialize(report.at("converging")).find("no status at all") == std::string::npos);

  // No status at all: the operator has never acted on it; often it is not running (found by a new-user trial that
  // forgot the fake operator: wait timed out on "has not observed generation 1" with no hint).
  in.service_set->erase("status");
  report = build("team-a", in, kNow);
  CHECK(report.at("converging").as_array().front().as_string() ==
        "the operator has not observed generation 2 yet (no status at all: is infer-operator running and watching "
        "namespace team-a?)");
}

TEST_CASE("pods of another InferServiceSet whose name shares a prefix are not counted") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  auto other = ready_pod("prefill", 0);
  other["metadata"].as_object()["labels"].as_object()["infer.huawei.com/inferservice-name"] = "mindie-motor-vllm-0-1";
  in.pods.push_back(other);
  CHECK(role_of(build("team-a", in, kNow), "prefill").at("pods").as_int64() == 1);
}

TEST_CASE("drift: baseline vs spec vs the operator's InstanceSets; HPA owns replicas") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  in.instance_sets.push_back(json::parse(R"({"metadata":{"name":"mindie-motor-vllm-0-decode",
      "labels":{"infer.huawei.com/instanceset-name":"decode",
                "infer.huawei.com/priority-scheduling-strategy":"Parallel"}},
      "status":{"replicas":2,"readyReplicas":1}})"));
  auto report = build("team-a", in, kNow);
  CHECK(role_of(report, "decode").at("observedInstances").as_int64() == 2);
  CHECK(json::serialize(report.at("converging"))
            .find("spec asks for 1 instances, the operator's InstanceSets report 2") != std::string::npos);
  CHECK_FALSE(report.at("ready").as_bool());

  // An HPA scalingPolicy: the HPA owns the replicas, so a different count is not drift.
  auto& roles = in.service_set->at("spec").as_object()["template"].as_object()["roles"].as_array();
  for (auto& r : roles) {
    if (r.at("name").as_string() != "decode") continue;
    r.as_object()["scalingPolicy"] = json::parse(R"({"type":"HPA"})");
    r.as_object()["replicas"] = 2;
  }
  in.instance_sets[0].as_object()["status"].as_object()["scalingResourceStatus"] =
      json::parse(R"({"type":"HPA","name":"hpa-decode","ready":true,"message":"ok"})");
  in.pods.push_back(ready_pod("decode", 1));
  report = build("team-a", in, kNow);
  const auto& decode = role_of(report, "decode");
  CHECK(decode.at("replicasOwner").as_string() == "HPA");
  CHECK(decode.at("hpa").at("name").as_string() == "hpa-decode");
  CHECK(report.at("drift").as_array().empty());
  CHECK(view(report, false).find("decode (replicas owned by HPA)") != std::string::npos);
}

TEST_CASE("a missing InferServiceSet is reported, not thrown") {
  const auto d = deployed(test::valid_config());
  status::StatusInputs in;
  in.config_map = d.cm;
  const auto report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("found").as_bool());
  CHECK_FALSE(report.at("ready").as_bool());
  CHECK(view(report, false).find("not found") != std::string::npos);
}

TEST_CASE("--timeout durations") {
  CHECK(cmd::parse_duration("10m", "--timeout") == std::chrono::minutes(10));
  CHECK(cmd::parse_duration("1h30m", "--timeout") == std::chrono::minutes(90));
  CHECK(cmd::parse_duration("500ms", "--timeout") == std::chrono::milliseconds(500));
  CHECK(cmd::parse_duration("45", "--timeout") == std::chrono::seconds(45));
  CHECK(cmd::parse_duration("0", "--timeout") == std::chrono::seconds(0));
  for (const char* bad : {"", "-1s", "10x", "m", "1.5h", "99999999999s"})
    CHECK_THROWS_AS(cmd::parse_duration(bad, "--timeout"), cmd::UsageError);
}

// Ascend/mind-cluster infer-operator (scaling/scaling_manager.go; inferservice_controller.go updateExistInstanceSets):
// an HPA scales the InstanceSet, so the role's own replicas are only where it started.
TEST_CASE("an HPA-owned role wants what the HPA set on its InstanceSet, not the role's count") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  for (auto& r : in.service_set->at("spec").as_object()["template"].as_object()["roles"].as_array())
    if (r.at("name").as_string() == "decode") r.as_object()["scalingPolicy"] = json::parse(R"({"type":"HPA"})");
  in.instance_sets.push_back(json::parse(R"({"metadata":{"name":"mindie-motor-vllm-0-decode",
      "labels":{"infer.huawei.com/instanceset-name":"decode","infer.huawei.com/inferservice-name":"mindie-motor-vllm-0",
                "infer.huawei.com/priority-scheduling-strategy":"Parallel"}},
      "spec":{"replicas":3},"status":{"replicas":3,"readyReplicas":3}})"));
  in.pods.push_back(ready_pod("decode", 1));
  in.pods.push_back(ready_pod("decode", 2));
  const auto report = build("team-a", in, kNow);
  const auto& decode = role_of(report, "decode");
  CHECK(decode.at("wantedInstances").as_int64() == 3);
  CHECK(decode.at("readyInstances").as_int64() == 3);
  CHECK(decode.at("healthy").as_bool());
  CHECK(report.at("ready").as_bool());
  CHECK(unready_text(report) == "[]");
  CHECK(view(report, false).find("3/3") != std::string::npos);
}

TEST_CASE("operator events on an InstanceSet explain an unhealthy role; a healthy role's old events say nothing") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  json::array pods;
  for (auto& p : in.pods)
    if (p.at("metadata").at("labels").at("infer.huawei.com/instanceset-name").as_string() != "coordinator")
      pods.push_back(p);
  in.pods = pods;
  const auto event = json::parse(R"({"type":"Warning","reason":"ValidateError","count":4,
      "message":"service infer of type NodePort must specify a non-zero nodePort",
      "lastTimestamp":"2027-01-15T07:59:00Z",
      "involvedObject":{"kind":"InstanceSet","name":"mindie-motor-vllm-0-coordinator"}})");
  in.events.push_back(event);
  auto report = build("team-a", in, kNow);
  const auto& coordinator = role_of(report, "coordinator");
  REQUIRE(coordinator.at("operatorEvents").as_array().size() == 1);
  CHECK(coordinator.at("operatorEvents").at(0).at("instanceSet").as_string() == "mindie-motor-vllm-0-coordinator");
  CHECK(unready_text(report).find("role coordinator: infer-operator refuses instanceset/mindie-motor-vllm-0-coordinator"
                                  " and creates nothing for it (ValidateError, 4 times): service infer of type "
                                  "NodePort must specify a non-zero nodePort") != std::string::npos);
  // Once the coordinator runs, the old event is kept in -o json but no longer a reason.
  in = all_ready(d);
  in.events.push_back(event);
  report = build("team-a", in, kNow);
  CHECK(role_of(report, "coordinator").at("operatorEvents").as_array().size() == 1);
  CHECK(unready_text(report) == "[]");
}

TEST_CASE("operator events about an earlier InstanceSet of the same name, or while the pods exist, are no reason") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  in.instance_sets.push_back(json::parse(R"({"metadata":{"name":"mindie-motor-vllm-0-coordinator","uid":"now",
      "labels":{"infer.huawei.com/instanceset-name":"coordinator",
                "infer.huawei.com/priority-scheduling-strategy":"Parallel"}}})"));
  in.events.push_back(json::parse(R"({"type":"Warning","reason":"ServiceCreateError","message":"port taken",
      "involvedObject":{"kind":"InstanceSet","name":"mindie-motor-vllm-0-coordinator","uid":"before"}})"));
  // The coordinator's pod crash-loops: it exists, so the pod's own reason explains the role.
  for (auto& p : in.pods)
    if (p.at("metadata").at("labels").at("infer.huawei.com/instanceset-name").as_string() == "coordinator")
      p.as_object()["status"].as_object()["conditions"].as_array()[1].as_object()["status"] = "False";
  auto report = build("team-a", in, kNow);
  CHECK(role_of(report, "coordinator").at("operatorEvents").as_array().empty());  // another uid
  in.events[0].as_object()["involvedObject"].as_object()["uid"] = "now";
  report = build("team-a", in, kNow);
  CHECK(role_of(report, "coordinator").at("operatorEvents").as_array().size() == 1);
  CHECK(unready_text(report).find("port taken") == std::string::npos);  // the pod exists
}

TEST_CASE("a huge replicas count in a live object is reported, not listed instance by instance") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  for (auto& r : in.service_set->at("spec").as_object()["template"].as_object()["roles"].as_array())
    if (r.at("name").as_string() == "prefill") r.as_object()["replicas"] = 2'000'000'000;
  const auto report = build("team-a", in, kNow);
  CHECK(role_of(report, "prefill").at("instances").as_array().size() == 1024);
  CHECK(json::serialize(report.at("drift"))
            .find("role prefill: 2000000000 instances wanted, beyond kubectl-mindie's "
                  "limit of 16 per role; only the first 1024 are shown") != std::string::npos);
}

TEST_CASE("counts beyond the product's limits are flagged: 17 instances, 65 pods, 10000000 InferServices") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  for (auto& r : in.service_set->at("spec").as_object()["template"].as_object()["roles"].as_array()) {
    if (r.at("name").as_string() == "prefill") r.as_object()["replicas"] = 17;
    if (r.at("name").as_string() == "decode") r.as_object()["spec"].as_object()["replicas"] = 65;
  }
  in.service_set->at("spec").as_object()["replicas"] = 10'000'000;
  const auto report = build("team-a", in, kNow);
  const std::string drift = json::serialize(report.at("drift"));
  CHECK(drift.find("role prefill: 17 instances wanted, beyond kubectl-mindie's limit of 16 per role\"") !=
        std::string::npos);
  CHECK(drift.find("role decode: 65 pods per instance wanted, beyond kubectl-mindie's limit of 64") !=
        std::string::npos);
  CHECK(drift.find("asks for 10000000 InferServices (spec.replicas), beyond what kubectl-mindie deploys (1); only "
                   "the first 16 are shown") != std::string::npos);
  CHECK(status::service_count(in.service_set) == 16);
  CHECK(status::service_selector("x", status::service_count(in.service_set)).size() < 200);
  CHECK(role_of(report, "prefill").at("instances").as_array().size() == 16 * 17);  // per InferService shown
}

TEST_CASE("status lists the deployment's Services like kubectl get service, headless per-instance ones left out") {
  const Deployed d = deployed(test::valid_config());
  status::StatusInputs in = all_ready(d);
  in.services = json::parse(R"([
    {"metadata":{"name":"obs-mindie-motor-vllm-0-coordinator"},
     "spec":{"type":"NodePort","clusterIP":"10.0.0.12","ports":[{"name":"obs","port":1027,"nodePort":31017,"protocol":"TCP"}]}},
    {"metadata":{"name":"coordinator-mindie-motor-vllm-0-coordinator"},
     "spec":{"clusterIP":"10.0.0.11","ports":[{"name":"mgmt","port":1026},{"name":"x","port":9,"protocol":"UDP"}]}},
    {"metadata":{"name":"service-mindie-motor-vllm-0-prefill-0"},"spec":{"clusterIP":"None","ports":[{"port":8080}]}},
    "not an object",
    {"metadata":{"name":"bare"}}
  ])")
                    .as_array();
  in.services_unknown = "";
  const Built report = build("mindie-demo", in, kNow);
  const json::array& services = report.at("services").as_array();
  REQUIRE(services.size() == 3);
  CHECK(services[0] == json::parse(R"({"name":"bare","type":"ClusterIP","clusterIP":"","ports":[]})"));
  CHECK(services[1].at("name") == "coordinator-mindie-motor-vllm-0-coordinator");
  CHECK(services[1].at("ports").as_array()[0] == json::parse(R"({"name":"mgmt","port":1026,"protocol":"TCP"})"));
  CHECK(services[2].at("ports").as_array()[0].at("nodePort") == 31017);
  const std::string table = view(report, false);
  CHECK(table.find("SERVICE ") != std::string::npos);
  CHECK(table.find("1027:31017/TCP") != std::string::npos);
  CHECK(table.find("1026/TCP,9/UDP") != std::string::npos);
  CHECK(table.find("service-mindie-motor-vllm-0-prefill-0") == std::string::npos);

  // A user who may not list Services gets the rest, with the reason.
  in.services.clear();
  in.services_unknown = "cannot list services in namespace mindie-demo (forbidden)";
  const Built partial = build("mindie-demo", in, kNow);
  CHECK(partial.at("services").as_array().empty());
  CHECK(view(partial, false).find("warning: cannot list services") != std::string::npos);
  CHECK(view(partial, false).find("SERVICE ") == std::string::npos);
}

namespace {

/// A pod being deleted (deletionTimestamp set) whose Ready condition still says True, as the kubelet leaves it
/// until the containers stop.
json::object terminating_pod(const std::string& role, int instance, int ordinal = 0) {
  auto pod = ready_pod(role, instance, ordinal);
  pod["metadata"].as_object()["deletionTimestamp"] = "2027-01-15T07:59:55Z";
  return pod;
}

/// An InferService or InstanceSet of the deployment with the operator's Ready condition.
json::object with_ready(const std::string& kind, const std::string& name, const std::string& role, bool ready,
                        const std::string& message) {
  json::object labels{{"infer.huawei.com/inferservice-name", "mindie-motor-vllm-0"}};
  if (!role.empty()) labels["infer.huawei.com/instanceset-name"] = role;
  return {{"kind", kind},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"status",
           {{"replicas", 1},
            {"conditions", json::array{{{"type", "Ready"},
                                        {"status", ready ? "True" : "False"},
                                        {"reason", ready ? "AllReady" : "ReplicasNotReady"},
                                        {"message", message}}}}}}};
}

/// The StatefulSet controller's SuccessfulCreate event about incarnation `uid` of workload `name`, at `when`.
json::object create_event(const std::string& name, const std::string& uid, const std::string& when) {
  return {{"type", "Normal"},
          {"reason", "SuccessfulCreate"},
          {"message", "create Pod " + name + "-0 in StatefulSet " + name + " successful"},
          {"involvedObject", {{"kind", "StatefulSet"}, {"name", name}, {"uid", uid}, {"apiVersion", "apps/v1"}}},
          {"firstTimestamp", when},
          {"lastTimestamp", when}};
}

/// The live StatefulSet of an instance of `iss` as status reads it (slim_workload), made at `created` from the
/// role's current template and rolled out.
json::object live_statefulset(const json::object& iss, const std::string& role, int instance, const std::string& uid,
                              const std::string& created) {
  const std::string name = "mindie-motor-vllm-0-" + role + "-" + std::to_string(instance);
  json::value hash;
  for (const auto& r : iss.at("spec").at("template").at("roles").as_array())
    if (r.at("name").as_string() == role)
      hash = r.at("spec").at("template").at("metadata").at("annotations").at(render::kTemplateHashAnnotation);
  return {{"kind", "StatefulSet"},
          {"metadata",
           {{"name", name},
            {"uid", uid},
            {"generation", 1},
            {"creationTimestamp", created},
            {"labels",
             {{"infer.huawei.com/inferservice-name", "mindie-motor-vllm-0"},
              {"infer.huawei.com/instanceset-name", role},
              {"infer.huawei.com/instanceset-index", std::to_string(instance)}}}}},
          {"spec",
           {{"replicas", 2},
            {"template", {{"metadata", {{"annotations", {{render::kTemplateHashAnnotation, hash}}}}}}}}},
          {"status", {{"observedGeneration", 1}, {"currentRevision", "r1"}, {"updateRevision", "r1"}}}};
}

}  // namespace

// Issue 29: during the real operator's rebuild loop every decode pod was "1/1 Terminating" and status said Ready
// with decode 2/2, 4/4 pods. A pod with a deletionTimestamp is going, whatever its Ready condition says.
TEST_CASE("a terminating pod is never ready: its instance, role and the report are not, and the counts say so") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  in.pods[2] = terminating_pod("prefill", 0);  // [2] is prefill instance 0's only pod
  const auto report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("ready").as_bool());
  const auto& prefill = role_of(report, "prefill");
  CHECK_FALSE(prefill.at("healthy").as_bool());
  CHECK(prefill.at("readyPods").as_int64() == 0);
  CHECK(prefill.at("terminatingPods").as_int64() == 1);
  CHECK(prefill.at("readyInstances").as_int64() == 0);
  CHECK(prefill.at("instances").as_array()[0].at("terminatingPods").as_int64() == 1);
  CHECK(unready_text(report).find("mindie-motor-vllm-0-prefill-0-0 (role prefill, instance 0): terminating since") !=
        std::string::npos);
  CHECK(unready_text(report).find("role prefill instance 0: 0 of 1 pods exist (+1 terminating)") != std::string::npos);
  const std::string table = view(report, false);
  CHECK(table.find("0/1 (+1 terminating)") != std::string::npos);
  CHECK(table.find("every desired pod exists and is ready") == std::string::npos);

  SUBCASE("a ready replacement beside the terminating pod is not enough while the old one is going") {
    auto replacement = ready_pod("prefill", 0, 1);
    in.pods.push_back(replacement);
    const auto r = build("team-a", in, kNow);
    CHECK_FALSE(r.at("ready").as_bool());
    CHECK(role_of(r, "prefill").at("readyPods").as_int64() == 1);
    CHECK(view(r, false).find("1/1 (+1 terminating)") != std::string::npos);
  }
}

// Issue 29: the tree listed the InferService as NotReady under a "Ready" headline.
TEST_CASE("the report is never ready above an InferService the operator calls NotReady") {
  const auto d = deployed(test::valid_config());
  auto in = all_ready(d);
  in.infer_services.push_back(with_ready("InferService", "mindie-motor-vllm-0", "", false, "1 of 4 not ready"));
  in.instance_sets.push_back(with_ready("InstanceSet", "mindie-motor-vllm-0-decode", "decode", false,
                                        "0 of 1 InferService replicas are ready"));
  auto report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("ready").as_bool());
  CHECK(unready_text(report).find("inferservice/mindie-motor-vllm-0: infer-operator reports it not Ready "
                                  "(ReplicasNotReady: 1 of 4 not ready); instanceset/mindie-motor-vllm-0-decode "
                                  "ReplicasNotReady: 0 of 1 InferService replicas are ready") != std::string::npos);
  CHECK(view(report, false).find("Not ready") != std::string::npos);

  SUBCASE("once the operator calls it Ready, so is the report") {
    in.infer_services[0] = with_ready("InferService", "mindie-motor-vllm-0", "", true, "all ready");
    in.instance_sets.clear();
    CHECK(build("team-a", in, kNow).at("ready").as_bool());
  }
  SUBCASE("a healthy master/standby pair, which the operator never calls Ready, is no reason") {
    auto pair = master_standby_inputs();
    pair.infer_services.push_back(with_ready("InferService", "mindie-motor-vllm-0", "", false, "1 of 4 not ready"));
    pair.instance_sets.push_back(with_ready("InstanceSet", "mindie-motor-vllm-0-controller", "controller", false,
                                            "0 of 1 InferService replicas are ready"));
    const auto r = build("team-a", pair, kNow);
    CHECK_MESSAGE(r.at("ready").as_bool(), unready_text(r) << json::serialize(r.at("converging")));
  }
}

// Issue 29: infer-operator's rescheduler deleted and re-created a gang decode instance every ~10 s while status,
// wait and scale --wait said ready. Each incarnation of the workload has its own uid in the controllers' events.
TEST_CASE("a gang instance whose workload is made again and again is named as being rebuilt, until it stays") {
  auto cfg = test::valid_config();
  test::deploy_of(cfg)["single_d_instance_pod_num"] = 2;  // decode: 2 pods per instance, gang-scheduled
  const auto d = deployed(cfg);
  auto in = all_ready(d);
  in.pods.push_back(ready_pod("decode", 0, 1));
  const std::string sts = "mindie-motor-vllm-0-decode-0";
  in.workload_events.push_back(create_event(sts, "uid-1", "2027-01-15T07:59:20Z"));
  in.workload_events.push_back(create_event(sts, "uid-2", "2027-01-15T07:59:31Z"));
  in.workload_events.push_back(create_event(sts, "uid-3", "2027-01-15T07:59:42Z"));
  in.workloads.push_back(live_statefulset(d.iss, "decode", 0, "uid-4", "2027-01-15T07:59:53Z"));  // 7 s before kNow
  auto decode_set = with_ready("InstanceSet", "mindie-motor-vllm-0-decode", "decode", true, "ready");
  decode_set["metadata"].as_object()["creationTimestamp"] = "2027-01-15T07:50:00Z";
  in.instance_sets.push_back(decode_set);

  auto report = build("team-a", in, kNow);
  CHECK_FALSE(report.at("ready").as_bool());
  const auto& decode = role_of(report, "decode");
  CHECK(decode.at("gang").as_bool());
  const auto& rebuild = decode.at("instances").as_array()[0].at("rebuild").as_object();
  CHECK(rebuild.at("workloads").as_int64() == 4);
  CHECK(rebuild.at("since").as_string() == "2027-01-15T07:59:20Z");
  CHECK(rebuild.at("latest").as_string() == "2027-01-15T07:59:53Z");
  CHECK(rebuild.at("ongoing").as_bool());
  CHECK(unready_text(report).find("role decode instance 0: infer-operator is rebuilding it: "
                                  "statefulset/mindie-motor-vllm-0-decode-0 was made 4 times since 07:59:20 UTC, "
                                  "last at 07:59:53 UTC") != std::string::npos);
  // The advice never is to delete the workload (that starts the loop): it names what ends it.
  CHECK(unready_text(report).find("kubectl delete") == std::string::npos);
  // Instance 0 cannot be scaled below; a delete leaves the operator's records, so a restart follows it.
  CHECK(unready_text(report).find("to end it, kubectl mindie delete -n team-a --wait, then restart infer-operator, "
                                  "the only thing that clears its fault records (kubectl rollout restart "
                                  "deployment/infer-operator-manager -n mindx-dl), and deploy again") !=
        std::string::npos);
  CHECK(view(report, false).find("Rebuilding") != std::string::npos);
  // A watcher judges again when the quiet period ends.
  REQUIRE(report.typed.recheck_at.has_value());
  CHECK(*report.typed.recheck_at == 1'800'000'000 - 7 + status::kRebuildQuietSeconds);

  SUBCASE("a pod of the instance terminating keeps it under way however long ago the last one was made") {
    in.pods.back() = terminating_pod("decode", 0, 1);
    const auto later = build("team-a", in, kNow + std::chrono::minutes(10));
    CHECK(role_of(later, "decode").at("instances").as_array()[0].at("rebuild").at("ongoing").as_bool());
  }
  SUBCASE("left alone for the quiet period, it is history and the instance counts again") {
    const auto later = build("team-a", in, kNow + std::chrono::seconds(status::kRebuildQuietSeconds));
    CHECK(later.at("ready").as_bool());
    CHECK_FALSE(role_of(later, "decode").at("instances").as_array()[0].at("rebuild").at("ongoing").as_bool());
    CHECK_FALSE(later.typed.recheck_at.has_value());
  }
  SUBCASE("workloads made before the InstanceSet (an earlier deployment of the same name) are not this one's") {
    // Found on the real control plane: the events of a deleted deployment's loop outlive it (one hour), and the
    // next deployment in the namespace was called "rebuilt 14 times" as it started.
    in.instance_sets[0].as_object()["metadata"].as_object()["creationTimestamp"] = "2027-01-15T07:59:50Z";
    const auto r = build("team-a", in, kNow);
    CHECK(r.at("ready").as_bool());
    CHECK(role_of(r, "decode").at("instances").as_array()[0].at("rebuild").is_null());
  }
  SUBCASE("without its InstanceSet (the operator not running, not made yet) nothing is counted") {
    in.instance_sets.clear();
    const auto r = build("team-a", in, kNow);
    CHECK(role_of(r, "decode").at("instances").as_array()[0].at("rebuild").is_null());
  }
  SUBCASE("made twice with nothing going is a re-creation (scaled in and out again), not a rebuild") {
    in.workload_events.resize(1);
    const auto r = build("team-a", in, kNow);
    CHECK(r.at("ready").as_bool());
    CHECK(role_of(r, "decode").at("instances").as_array()[0].at("rebuild").is_null());
  }
  SUBCASE("a role without gang scheduling is never judged so (the rescheduler ignores its pod deletions)") {
    auto plain = all_ready(deployed(test::valid_config()));
    plain.workload_events = in.workload_events;
    for (auto& e : plain.workload_events)
      e.as_object()["involvedObject"].as_object()["name"] = "mindie-motor-vllm-0-prefill-0";
    const auto r = build("team-a", plain, kNow);
    CHECK(r.at("ready").as_bool());
    CHECK(role_of(r, "prefill").at("instances").as_array()[0].at("rebuild").is_null());
  }
}
