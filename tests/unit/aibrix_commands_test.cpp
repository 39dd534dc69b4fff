// The pure parts of --framework aibrix: flag checks (use_aibrix) and the StormService status report (grouping by
// AIBrix's labels, readiness, recreated pods from events, restarts, Services).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "aibrix/storm_render.h"
#include "aibrix/storm_status.h"
#include "aibrix_test_support.h"
#include "cmd/aibrix.h"

using namespace mindie;
namespace json = boost::json;

namespace {

/// A rendered StormService (prefill 2 × 1 pod, decode 1 × 2 pods, no routing) with status observed.
json::object storm_service() {
  auto cfg = test::aibrix_config();
  test::role_cfg(cfg, "prefill")["replicas"] = 2;
  test::role_cfg(cfg, "decode")["podGroupSize"] = 2;
  test::role_cfg(cfg, "decode")["dp_size"] = 2;
  test::role_cfg(cfg, "decode")["tp_size"] = 4;
  json::object ss = aibrix::render_storm_service(test::aibrix_parse(cfg)).front();
  ss["metadata"].as_object()["generation"] = 3;
  ss["status"] = {{"observedGeneration", 3},
                  {"roleStatuses", json::array{{{"name", "prefill"}, {"replicas", 2}, {"readyReplicas", 2}}}}};
  return ss;
}

json::object pod(const std::string& role, int replica, int group_index, const std::string& uid, bool ready = true,
                 int restarts = 0) {
  std::string name = "demo-roleset-" + role + "-" + std::to_string(replica);
  json::object labels{{aibrix::kStormServiceNameLabel, "demo"},
                      {aibrix::kRoleNameLabel, role},
                      {aibrix::kRoleReplicaIndexLabel, std::to_string(replica)}};
  if (group_index >= 0) {
    labels[aibrix::kPodGroupIndexLabel] = std::to_string(group_index);
    name += "-" + std::to_string(group_index);
  }
  return {{"metadata",
           {{"name", name}, {"uid", uid}, {"labels", labels}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
          {"spec", {{"nodeName", "node-1"}}},
          {"status",
           {{"phase", "Running"},
            {"conditions", json::array{{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}},
            {"containerStatuses", json::array{{{"name", "main"}, {"ready", ready}, {"restartCount", restarts}}}}}}};
}

/// A report as scripts read it (StormStatus::to_json), keeping the typed report for the view.
struct Built : json::object {
  aibrix::StormStatus typed;
};

Built build(const std::string& ns, const aibrix::StormStatusInputs& in, std::chrono::system_clock::time_point now) {
  Built b;
  b.typed = aibrix::build_storm_status(ns, in, now);
  static_cast<json::object&>(b) = b.typed.to_json();
  return b;
}

aibrix::StormStatusInputs healthy() {
  aibrix::StormStatusInputs in;
  in.storm_service = storm_service();
  for (const auto& p :
       {pod("prefill", 0, -1, "u1"), pod("prefill", 1, -1, "u2"), pod("decode", 0, 0, "u3"), pod("decode", 0, 1, "u4")})
    in.pods.push_back(p);
  return in;
}

const json::object& role(const json::object& report, const std::string& name) {
  for (const auto& r : report.at("roles").as_array())
    if (r.at("name") == name.c_str()) return r.as_object();
  throw std::runtime_error("no role " + name);
}

const auto kNow = std::chrono::system_clock::from_time_t(1767225660);  // 2026-01-01T00:01:00Z

}  // namespace

TEST_CASE("--framework: mindie by default, aibrix on request; AIBrix-only flags need it") {
  cmd::FrameworkFlags f;
  CHECK_FALSE(cmd::use_aibrix(f));
  f.framework = "aibrix";
  CHECK(cmd::use_aibrix(f));
  f.framework = "kserve";
  CHECK_THROWS_AS(cmd::use_aibrix(f), cmd::UsageError);
  f.framework = "mindie";
  f.app = "demo";
  CHECK_THROWS_WITH_AS(cmd::use_aibrix(f), "--app needs --framework aibrix", cmd::UsageError);
}

TEST_CASE("storm status: a healthy StormService, grouped by AIBrix's labels") {
  const auto report = build("team-a", healthy(), kNow);
  CHECK(report.at("kind") == "StormServiceStatus");
  CHECK(report.at("ready") == true);
  CHECK(report.at("generation") == 3);
  const auto& prefill = role(report, "prefill");
  CHECK(prefill.at("readyReplicas") == 2);
  CHECK(prefill.at("statusReadyReplicas") == 2);
  CHECK(prefill.at("minAvailable") == "2");  // decode uses groups: prefill's own replicas (case b)
  const auto& decode = role(report, "decode");
  CHECK(decode.at("podGroupSize") == 2);
  CHECK(decode.at("statusReplicas").is_null());  // not in roleStatuses
  CHECK(decode.at("desiredPods") == 2);
  const auto& group = decode.at("groups").as_array().at(0).as_object();
  CHECK(group.at("ready") == true);
  CHECK(group.at("pods").as_array().at(1).at("podGroupIndex") == 1);
  CHECK(group.at("pods").as_array().at(1).at("ageSeconds") == 60);
  CHECK(report.at("rescheduling").as_array().empty());
  CHECK(report.at("unready").as_array().empty());
  CHECK(report.at("services").at("expected").as_array().empty());  // no routing role: no Services
  const std::string human = aibrix::render_storm_status(report.typed);
  CHECK(human.find("StormService demo in namespace team-a: ready") != std::string::npos);
  CHECK(human.find("replica 0  ready") != std::string::npos);
}

TEST_CASE("storm status: pods recreated since scale changed their role's template say so (issue 33's words)") {
  // decode's template changed at 00:00:00 (the pods were made then); prefill's was not recorded as changed.
  auto in = healthy();
  in.pods.at(1) = pod("prefill", 1, -1, "u2-new");
  in.pods.at(2) = pod("decode", 0, 0, "u3-new");
  for (const auto& [name, uid] :
       {std::pair{"demo-roleset-prefill-1", "u2"}, std::pair{"demo-roleset-decode-0-0", "u3"}})
    in.events.push_back({{"involvedObject", {{"kind", "Pod"}, {"name", name}, {"uid", uid}}},
                         {"type", "Normal"},
                         {"reason", "Scheduled"},
                         {"message", "Successfully assigned"},
                         {"source", {{"component", "default-scheduler"}}},
                         {"lastTimestamp", "2025-12-31T23:50:00Z"}});
  const auto ops = aibrix::template_change_ops(in.storm_service, {"decode"}, 1767225600);  // 2026-01-01T00:00:00Z
  REQUIRE(ops.size() == 1);
  CHECK(ops.at(0).at("path") == "/metadata/annotations");  // the StormService had no annotations
  json::value patched = in.storm_service;
  patched.as_object()["metadata"].as_object()["annotations"] = ops.at(0).at("value");
  in.storm_service = patched.as_object();
  CHECK(aibrix::template_change_ops(in.storm_service, {"decode"}, 1).at(0).at("path") ==
        "/metadata/annotations/kubectl-mindie~1template-change");
  const auto report = build("team-a", in, kNow);
  const auto& resched = report.at("rescheduling").as_array();
  REQUIRE(resched.size() == 2);
  CHECK(resched.at(0) ==
        "pod demo-roleset-prefill-1 (role prefill, replica 1): recreated: 1 earlier pod of this name "
        "(default-scheduler Scheduled: Successfully assigned)");
  CHECK(resched.at(1) ==
        "pod demo-roleset-decode-0-0 (role decode, replica 0, pod 0): recreated after a template change: 1 earlier "
        "pod of this name (default-scheduler Scheduled: Successfully assigned)");
  const auto pod_json = [&](const char* role_name, std::size_t group, std::size_t index) {
    return role(report, role_name).at("groups").as_array().at(group).at("pods").as_array().at(index);
  };
  CHECK(pod_json("decode", 0, 0).at("recreatedAfterTemplateChange") == true);
  CHECK(pod_json("prefill", 1, 0).at("recreated") == true);
  CHECK(pod_json("prefill", 1, 0).at("recreatedAfterTemplateChange") == false);
  // A pod made before the recorded change was not recreated for it.
  in.storm_service["metadata"].as_object()["annotations"].as_object()[aibrix::kTemplateChangeAnnotation] =
      R"({"at":"2026-01-01T00:00:01Z","roles":["decode"]})";
  CHECK(build("team-a", in, kNow).at("rescheduling").as_array().at(1).as_string().find("template change") ==
        std::string::npos);
}

TEST_CASE("storm status: recreated pods from events about an earlier uid, restarts, missing pods, old generation") {
  auto in = healthy();
  in.pods.at(1) = pod("prefill", 1, -1, "u2-new");
  in.pods.at(3) = pod("decode", 0, 1, "u4", false, 3);
  in.events.push_back({{"involvedObject", {{"kind", "Pod"}, {"name", "demo-roleset-prefill-1"}, {"uid", "u2"}}},
                       {"type", "Normal"},
                       {"reason", "Killing"},
                       {"message", "Stopping container main"},
                       {"source", {{"component", "kubelet"}}},
                       {"lastTimestamp", "2026-01-01T00:00:30Z"}});
  in.events.push_back({{"involvedObject", {{"kind", "Pod"}, {"name", "demo-roleset-decode-0-1"}, {"uid", "u4"}}},
                       {"type", "Warning"},
                       {"reason", "BackOff"},
                       {"message", "Back-off restarting failed container"},
                       {"source", {{"component", "kubelet"}}},
                       {"lastTimestamp", "2026-01-01T00:00:40Z"}});
  auto report = build("team-a", in, kNow);
  CHECK(report.at("ready") == false);
  CHECK(role(report, "prefill").at("recreatedPods") == 1);
  CHECK(role(report, "decode").at("restarts") == 3);
  CHECK(role(report, "decode").at("readyReplicas") == 0);
  const auto& resched = report.at("rescheduling").as_array();
  REQUIRE(resched.size() == 2);
  CHECK(resched.at(0) ==
        "pod demo-roleset-prefill-1 (role prefill, replica 1): recreated: 1 earlier pod of this "
        "name (kubelet Killing: Stopping container main)");
  CHECK(resched.at(1) == "pod demo-roleset-decode-0-1 (role decode, replica 0, pod 1): 3 restarts");
  REQUIRE(report.at("unready").as_array().size() == 1);
  CHECK(std::string(report.at("unready").as_array().at(0).as_string()).find("[kubelet BackOff: Back-off") !=
        std::string::npos);

  // A missing pod of a group, and a controller that has not observed the latest generation.
  in = healthy();
  in.pods.erase(in.pods.begin() + 3);
  in.storm_service["metadata"].as_object()["generation"] = 4;
  report = build("team-a", in, kNow);
  CHECK(report.at("ready") == false);
  CHECK(report.at("unready").as_array().at(0) == "role decode replica 0: 1 of 2 pods");
  in = healthy();
  in.storm_service["metadata"].as_object()["generation"] = 4;
  CHECK(build("team-a", in, kNow).at("ready") == false);
  // A pod beyond the spec (scale-in in progress).
  in = healthy();
  in.pods.push_back(pod("prefill", 2, -1, "u9"));
  report = build("team-a", in, kNow);
  CHECK(report.at("ready") == false);
  CHECK(std::string(report.at("unready").as_array().at(0).as_string()).find("beyond the spec's 2 replicas") !=
        std::string::npos);
}

TEST_CASE("storm status: a creation time with a UTC offset gives the pod's true age") {
  // Was a bug: the StormService report read the clock time and ignored the offset, so this pod looked 8 hours
  // older than it is. 2026-01-01T07:00:30+08:00 is 30 s before kNow.
  aibrix::StormStatusInputs in = healthy();
  in.pods[0].as_object()["metadata"].as_object()["creationTimestamp"] = "2026-01-01T08:00:30+08:00";
  const auto report = build("team-a", in, kNow);
  const auto& first = role(report, "prefill").at("groups").as_array()[0].at("pods").as_array()[0];
  CHECK(first.at("ageSeconds") == 30);
}

TEST_CASE("storm status: pods are explained as in the MindIE status (OOM kill, image pull)") {
  aibrix::StormStatusInputs in = healthy();
  auto& status = in.pods[0].as_object()["status"].as_object();
  status["conditions"] = json::array{{{"type", "Ready"}, {"status", "False"}}};
  status["containerStatuses"] =
      json::array{{{"name", "main"},
                   {"ready", false},
                   {"restartCount", 2},
                   {"state", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}},
                   {"lastState", {{"terminated", {{"reason", "OOMKilled"}, {"exitCode", 137}}}}}}};
  auto report = build("team-a", in, kNow);
  CHECK(json::serialize(report.at("unready")).find("out of memory: the container was OOM-killed") != std::string::npos);
}
