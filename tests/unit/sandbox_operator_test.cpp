// The sandbox's --simulate-operator: the object chain infer-operator and the workload controllers keep
// (InferService, InstanceSet, Deployment/ReplicaSet or StatefulSet, Services, pods), their statuses, and the pod
// states tests set through POST /sandbox/pod-state or --pod-state, with the Events kubelet and the schedulers record.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>

#include "sandbox/api_server.h"
#include "sandbox/operator_sim.h"
#include "sandbox/pod_state.h"
#include "sandbox/table.h"
#include "support/openapi_schema.h"

using namespace mindie::sandbox;
using nlohmann::json;

namespace {

const std::string kMc = "/apis/mindcluster.huawei.com/v1/namespaces/default/";
const std::string kPods = "/api/v1/namespaces/default/pods";

struct Sandbox {
  ApiServer api;
  explicit Sandbox(ServerOptions o = {}) : api(registry(), (o.token = "t", o.simulate_operator = true, std::move(o))) {}

  static Registry registry() {
    Registry r(true);
    for (const auto& c : mindie::testing::load_crd_schemas(std::string(MINDIE_SHARED_DIR) +
                                                           "/reference/crds/mindcluster.huawei.com_crds.yaml"))
      r.add_crd(c.group, c.version, c.kind, c.plural, c.namespaced, c.status_subresource, c.schema);
    return r;
  }
  HttpResponse call(const std::string& method, const std::string& path, const std::string& body = "",
                    std::multimap<std::string, std::string> params = {},
                    const std::string& content_type = "application/json") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.content_type = content_type;
    r.authorization = "Bearer t";
    r.params = std::move(params);
    return api.handle(r);
  }
  json get(const std::string& path) {
    const HttpResponse r = call("GET", path);
    REQUIRE_MESSAGE(r.status == 200, path, " ", r.body);
    return json::parse(r.body);
  }
  json items(const std::string& path, const std::string& selector = "") {
    std::multimap<std::string, std::string> q;
    if (!selector.empty()) q.emplace("labelSelector", selector);
    return json::parse(call("GET", path, "", q).body)["items"];
  }
  json pod(const std::string& name) { return get(kPods + "/" + name); }
  HttpResponse pod_state(const json& body) { return call("POST", "/sandbox/pod-state", body.dump()); }
  std::vector<json> events_of(const std::string& pod, const std::string& reason) {
    std::vector<json> out;
    for (const auto& e : items("/api/v1/namespaces/default/events"))
      if (e["involvedObject"]["name"] == pod && e["reason"] == reason) out.push_back(e);
    return out;
  }
};

json role(const std::string& name, int replicas, const std::string& kind, int pods, json container) {
  return {{"name", name},
          {"replicas", replicas},
          {"workload", {{"apiVersion", "apps/v1"}, {"kind", kind}}},
          {"spec", {{"replicas", pods},
                    {"template", {{"metadata", {{"labels", {{"app", name}}}}},
                                  {"spec", {{"containers", {container}}}}}}}}};
}

json engine_container() {
  return {{"name", "e"}, {"image", "mindie:1"},
          {"resources", {{"limits", {{"huawei.com/Ascend910", "8"}}}, {"requests", {{"huawei.com/Ascend910", "8"}}}}}};
}

json iss(int prefill = 2) {
  json coordinator = role("coordinator", 1, "Deployment", 2,
                          {{"name", "c"}, {"image", "mindie:1"},
                           {"readinessProbe", {{"exec", {{"command", {"probe.sh", "readiness"}}}}}}});
  coordinator["services"] = {{{"name", "coord"}, {"spec", {{"ports", {{{"name", "http"}, {"port", 1025}}}}}}}};
  json prefill_role = role("prefill", prefill, "StatefulSet", 1, engine_container());
  prefill_role["spec"]["template"]["spec"]["schedulerName"] = "volcano";
  json decode = role("decode", 1, "StatefulSet", 1,
                     {{"name", "e"}, {"image", "mindie:1"},
                      {"readinessProbe", {{"httpGet", {{"path", "/health"}, {"port", 8080}}}}}});
  return {{"apiVersion", "mindcluster.huawei.com/v1"},
          {"kind", "InferServiceSet"},
          {"metadata", {{"name", "demo"}}},
          {"spec", {{"replicas", 1}, {"template", {{"roles", {coordinator, prefill_role, decode}}}}}}};
}

std::string uid(const json& o) { return o["metadata"]["uid"]; }

json owner_of(const json& o) { return o["metadata"]["ownerReferences"][0]; }

bool ready_condition(const json& o) {
  for (const auto& c : o["status"]["conditions"])
    if (c["type"] == "Ready") return c["status"] == "True";
  return false;
}

}  // namespace

TEST_CASE("operator: the object chain — names, labels, owners, workloads and pods") {
  Sandbox s;
  REQUIRE(s.call("POST", kMc + "inferservicesets", iss().dump()).status == 201);
  const json set = s.get(kMc + "inferservicesets/demo");
  const json is = s.get(kMc + "inferservices/demo-0");
  CHECK(is["metadata"]["labels"] == json{{"infer.huawei.com/inferserviceset-name", "demo"},
                                        {"infer.huawei.com/inferservice-index", "0"}});
  CHECK(owner_of(is)["uid"] == uid(set));
  CHECK(owner_of(is)["controller"] == true);
  CHECK(is["spec"]["roles"].size() == 3);

  const json prefill = s.get(kMc + "instancesets/demo-0-prefill");
  CHECK(prefill["metadata"]["labels"]["infer.huawei.com/inferservice-name"] == "demo-0");
  CHECK(prefill["metadata"]["labels"]["infer.huawei.com/instanceset-name"] == "prefill");
  CHECK(owner_of(prefill)["uid"] == uid(is));
  CHECK(prefill["spec"]["replicas"] == 2);

  // One workload per instance, of the role's kind, replicas = pods per instance.
  const json sts = s.get("/apis/apps/v1/namespaces/default/statefulsets/demo-0-prefill-1");
  CHECK(owner_of(sts)["uid"] == uid(prefill));
  CHECK(sts["spec"]["replicas"] == 1);
  CHECK(sts["metadata"]["labels"]["infer.huawei.com/instanceset-index"] == "1");
  CHECK(s.get("/api/v1/namespaces/default/services/service-demo-0-prefill-1")["spec"]["clusterIP"] == "None");
  const json pod = s.pod("demo-0-prefill-1-0");
  CHECK(owner_of(pod)["uid"] == uid(sts));
  CHECK(pod["metadata"]["labels"]["infer.huawei.com/ascend-infer-operator"] == "true");
  CHECK(pod["metadata"]["labels"]["app"] == "prefill");
  CHECK(pod["spec"]["subdomain"] == "service-demo-0-prefill-1");
  const json env = pod["spec"]["containers"][0]["env"];
  CHECK(env[1] == json{{"name", "INFER_SERVICE_INDEX"}, {"value", "0"}});
  CHECK(env[3] == json{{"name", "INSTANCE_INDEX"}, {"value", "1"}});

  const json deploy = s.get("/apis/apps/v1/namespaces/default/deployments/demo-0-coordinator-0");
  CHECK(deploy["spec"]["replicas"] == 2);
  const json rs = s.items("/apis/apps/v1/namespaces/default/replicasets");
  REQUIRE(rs.size() == 1);
  CHECK(owner_of(rs[0])["uid"] == uid(deploy));
  const json coord = s.items(kPods, "infer.huawei.com/instanceset-name=coordinator");
  REQUIRE(coord.size() == 2);
  for (const auto& p : coord) {
    CHECK(owner_of(p)["uid"] == uid(rs[0]));
    CHECK(p["metadata"]["name"].get<std::string>().rfind(rs[0]["metadata"]["name"].get<std::string>() + "-", 0) == 0);
  }
  CHECK(s.get("/api/v1/namespaces/default/services/coord-demo-0-coordinator")["spec"]["selector"] ==
        json{{"infer.huawei.com/inferservice-name", "demo-0"}, {"infer.huawei.com/instanceset-name", "coordinator"}});

  // Deleting the set takes everything with it.
  REQUIRE(s.call("DELETE", kMc + "inferservicesets/demo").status == 200);
  CHECK(s.items(kPods).empty());
  CHECK(s.items(kMc + "instancesets").empty());
  CHECK(s.items("/apis/apps/v1/namespaces/default/statefulsets").empty());
  CHECK(s.items("/api/v1/namespaces/default/services").empty());
}

TEST_CASE("operator: statuses from the pods up; master/standby never Ready") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss().dump());
  const json deploy = s.get("/apis/apps/v1/namespaces/default/deployments/demo-0-coordinator-0");
  CHECK(deploy["status"]["replicas"] == 2);
  CHECK(deploy["status"]["readyReplicas"] == 1);  // the standby fails readiness
  CHECK(deploy["status"]["observedGeneration"] == 1);
  CHECK(deploy["status"]["conditions"][0]["type"] == "Available");
  const json sts = s.get("/apis/apps/v1/namespaces/default/statefulsets/demo-0-prefill-0");
  CHECK(sts["status"]["readyReplicas"] == 1);
  CHECK(sts["status"]["updatedReplicas"] == 1);
  CHECK(workload_ready(sts));
  CHECK_FALSE(workload_ready(deploy));

  const json coordinator = s.get(kMc + "instancesets/demo-0-coordinator");
  CHECK(coordinator["status"]["replicas"] == 1);
  CHECK(coordinator["status"]["readyReplicas"] == 0);
  CHECK_FALSE(ready_condition(coordinator));
  const json prefill = s.get(kMc + "instancesets/demo-0-prefill");
  CHECK(prefill["status"]["readyReplicas"] == 2);
  CHECK(prefill["status"]["labelSelector"] ==
        "infer.huawei.com/inferservice-name=demo-0,infer.huawei.com/instanceset-name=prefill");
  CHECK(prefill["status"]["observedGeneration"] == 1);
  CHECK(ready_condition(prefill));
  CHECK_FALSE(prefill["status"].contains("scalingResourceStatus"));
  const json is = s.get(kMc + "inferservices/demo-0");
  CHECK(is["status"]["replicas"] == 3);
  CHECK(is["status"]["readyReplicas"] == 2);
  CHECK_FALSE(ready_condition(is));
  const json set = s.get(kMc + "inferservicesets/demo");
  CHECK(set["status"]["replicas"] == 1);
  CHECK(set["status"]["readyReplicas"] == 0);

  // The standby made ready: everything above turns Ready.
  const json standby = s.items(kPods, "infer.huawei.com/instanceset-name=coordinator");
  for (const auto& p : standby)
    s.pod_state({{"namespace", "default"}, {"pod", p["metadata"]["name"]}, {"state", "Ready"}});
  CHECK(ready_condition(s.get(kMc + "instancesets/demo-0-coordinator")));
  CHECK(ready_condition(s.get(kMc + "inferservices/demo-0")));
  const json ready_set = s.get(kMc + "inferservicesets/demo");
  CHECK(ready_set["status"]["readyReplicas"] == 1);
  CHECK(ready_condition(ready_set));
}

TEST_CASE("operator: scale in and out, role removal, HPA-owned replicas") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss(3).dump());
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=prefill").size() == 3);
  const std::string patch = R"([{"op":"replace","path":"/spec/template/roles/1/replicas","value":1}])";
  REQUIRE(s.call("PATCH", kMc + "inferservicesets/demo", patch, {}, "application/json-patch+json").status == 200);
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=prefill").size() == 1);
  CHECK(s.call("GET", "/apis/apps/v1/namespaces/default/statefulsets/demo-0-prefill-1").status == 404);
  CHECK(s.call("GET", "/api/v1/namespaces/default/services/service-demo-0-prefill-2").status == 404);
  const json prefill = s.get(kMc + "instancesets/demo-0-prefill");
  CHECK(prefill["spec"]["replicas"] == 1);
  CHECK(prefill["status"]["replicas"] == 1);
  CHECK(prefill["metadata"]["generation"] == 2);
  CHECK(prefill["status"]["observedGeneration"] == 2);
  CHECK(s.get(kMc + "inferservicesets/demo")["status"]["observedGeneration"] == 2);

  // A role removed: its InstanceSet and everything under it go.
  const std::string drop = R"([{"op":"remove","path":"/spec/template/roles/2"}])";
  REQUIRE(s.call("PATCH", kMc + "inferservicesets/demo", drop, {}, "application/json-patch+json").status == 200);
  CHECK(s.call("GET", kMc + "instancesets/demo-0-decode").status == 404);
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=decode").empty());
  CHECK(s.get(kMc + "inferservices/demo-0")["status"]["replicas"] == 2);

  // An HPA owns its role's replicas: patching the role changes nothing; the HPA scaling the InstanceSet does.
  const std::string hpa = R"([{"op":"add","path":"/spec/template/roles/1/scalingPolicy","value":{"type":"HPA"}}])";
  REQUIRE(s.call("PATCH", kMc + "inferservicesets/demo", hpa, {}, "application/json-patch+json").status == 200);
  json ist = s.get(kMc + "instancesets/demo-0-prefill");
  CHECK(ist["status"]["scalingResourceStatus"]["type"] == "HPA");
  CHECK(ist["status"]["scalingResourceStatus"]["ready"] == true);
  CHECK(ist["status"]["scalingResourceStatus"]["name"] == "demo-0-prefill");
  const std::string more = R"([{"op":"replace","path":"/spec/template/roles/1/replicas","value":4}])";
  s.call("PATCH", kMc + "inferservicesets/demo", more, {}, "application/json-patch+json");
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=prefill").size() == 1);
  s.call("PATCH", kMc + "instancesets/demo-0-prefill", R"({"spec":{"replicas":2}})", {},
         "application/merge-patch+json");
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=prefill").size() == 2);

  // Several InferServices: index >= spec.replicas goes.
  s.call("PATCH", kMc + "inferservicesets/demo", R"({"spec":{"replicas":2}})", {}, "application/merge-patch+json");
  CHECK(s.items(kMc + "inferservices").size() == 2);
  CHECK(s.items(kPods, "infer.huawei.com/inferservice-name=demo-1").size() == 2 + 4);  // coordinator 2, prefill 4
  s.call("PATCH", kMc + "inferservicesets/demo", R"({"spec":{"replicas":1}})", {}, "application/merge-patch+json");
  CHECK(s.items(kMc + "inferservices").size() == 1);
  CHECK(s.items(kPods, "infer.huawei.com/inferservice-name=demo-1").empty());
  // A set the operator refuses (replicas out of 1..64) changes nothing.
  s.call("PATCH", kMc + "inferservicesets/demo", R"({"spec":{"replicas":0}})", {}, "application/merge-patch+json");
  CHECK(s.items(kMc + "inferservices").size() == 1);
}

TEST_CASE("operator: controllers replace what a client deletes") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss().dump());
  const std::string old_uid = uid(s.pod("demo-0-prefill-0-0"));
  REQUIRE(s.call("DELETE", kPods + "/demo-0-prefill-0-0").status == 200);
  CHECK(uid(s.pod("demo-0-prefill-0-0")) != old_uid);  // the StatefulSet recreates its ordinal
  const json coord = s.items(kPods, "infer.huawei.com/instanceset-name=coordinator");
  REQUIRE(s.call("DELETE", kPods + "/" + coord[0]["metadata"]["name"].get<std::string>()).status == 200);
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=coordinator").size() == 2);
  REQUIRE(s.call("DELETE", kMc + "instancesets/demo-0-decode").status == 200);
  CHECK(s.call("GET", kMc + "instancesets/demo-0-decode").status == 200);
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=decode").size() == 1);
}

TEST_CASE("deployment controller: a new pod template ends with the old ReplicaSet at 0; scale-in removes pods") {
  Sandbox s;
  const std::string deployments = "/apis/apps/v1/namespaces/default/deployments";
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", "web"}}},
            {"spec", {{"replicas", 2},
                      {"selector", {{"matchLabels", {{"app", "web"}}}}},
                      {"template", {{"metadata", {{"labels", {{"app", "web"}}}}},
                                    {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx:1"}}}}}}}}}}};
  REQUIRE(s.call("POST", deployments, d.dump()).status == 201);
  CHECK(s.items(kPods, "app=web").size() == 2);
  // A new template (the failing input: both ReplicaSets kept their pods, 4 running for 2 desired).
  d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2";
  REQUIRE(s.call("PUT", deployments + "/web", d.dump()).status == 200);
  const json pods = s.items(kPods, "app=web");
  CHECK(pods.size() == 2);
  for (const auto& p : pods) CHECK(p["spec"]["containers"][0]["image"] == "nginx:2");
  int old_sets = 0;
  for (const auto& rs : s.items("/apis/apps/v1/namespaces/default/replicasets", "app=web")) {
    const bool current = rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2";
    CHECK(rs["spec"]["replicas"] == (current ? 2 : 0));
    old_sets += current ? 0 : 1;
  }
  CHECK(old_sets == 1);
  CHECK(s.get(deployments + "/web")["status"]["readyReplicas"] == 2);
  // Scale-in follows spec.replicas down.
  d["spec"]["replicas"] = 1;
  REQUIRE(s.call("PUT", deployments + "/web", d.dump()).status == 200);
  CHECK(s.items(kPods, "app=web").size() == 1);
  CHECK(s.get(deployments + "/web")["status"]["replicas"] == 1);
}

TEST_CASE("pod-state: NotReady, Ready, and the Unhealthy event the kubelet repeats") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss().dump());
  const HttpResponse r = s.pod_state({{"namespace", "default"}, {"role", "decode"}, {"state", "NotReady"}});
  REQUIRE(r.status == 200);
  CHECK(json::parse(r.body)["pods"] == json{"demo-0-decode-0-0"});
  json pod = s.pod("demo-0-decode-0-0");
  CHECK(pod["status"]["phase"] == "Running");
  CHECK_FALSE(ready_condition(pod));
  CHECK(pod["status"]["containerStatuses"][0]["ready"] == false);
  CHECK(pod["status"]["containerStatuses"][0]["state"].contains("running"));
  auto events = s.events_of("demo-0-decode-0-0", "Unhealthy");
  REQUIRE(events.size() == 1);
  const json& e = events[0];
  CHECK(e["type"] == "Warning");
  CHECK(e["message"].get<std::string>().rfind("Readiness probe failed: Get \"http://", 0) == 0);
  CHECK(e["involvedObject"]["kind"] == "Pod");
  CHECK(e["involvedObject"]["uid"] == uid(pod));
  CHECK(e["involvedObject"]["fieldPath"] == "spec.containers{e}");
  CHECK(e["source"] == json{{"component", "kubelet"}, {"host", pod["spec"]["nodeName"]}});
  CHECK(e["reportingComponent"] == "kubelet");
  CHECK(e["count"] == 1);
  CHECK(e["firstTimestamp"].is_string());
  CHECK(e["lastTimestamp"].is_string());
  CHECK(e["metadata"]["name"].get<std::string>().rfind("demo-0-decode-0-0.", 0) == 0);
  CHECK(s.items("/api/v1/namespaces/default/events", "").size() == 1);
  CHECK_FALSE(ready_condition(s.get(kMc + "instancesets/demo-0-decode")));
  s.pod_state({{"namespace", "default"}, {"role", "decode"}, {"state", "NotReady"}});
  events = s.events_of("demo-0-decode-0-0", "Unhealthy");
  REQUIRE(events.size() == 1);
  CHECK(events[0]["count"] == 2);

  s.pod_state({{"namespace", "default"}, {"pod", "demo-0-decode-0-0"}, {"state", "Ready"}});
  pod = s.pod("demo-0-decode-0-0");
  CHECK(ready_condition(pod));
  CHECK(ready_condition(s.get(kMc + "instancesets/demo-0-decode")));
  // An exec probe's failure message is its (here empty) output.
  const json coord = s.items(kPods, "infer.huawei.com/instanceset-name=coordinator");
  s.pod_state({{"namespace", "default"}, {"pod", coord[0]["metadata"]["name"]}, {"state", "NotReady"}});
  CHECK(s.events_of(coord[0]["metadata"]["name"], "Unhealthy")[0]["message"] == "Readiness probe failed: ");
}

TEST_CASE("pod-state: Unschedulable in the words of the pod's scheduler") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss().dump());
  s.pod_state({{"namespace", "default"}, {"role", "prefill"}, {"instance", 1}, {"state", "Unschedulable"}});
  const json pod = s.pod("demo-0-prefill-1-0");
  CHECK_FALSE(pod["spec"].contains("nodeName"));
  CHECK(pod["status"]["phase"] == "Pending");
  CHECK_FALSE(pod["status"].contains("podIP"));
  CHECK_FALSE(pod["status"].contains("containerStatuses"));
  const json cond = pod["status"]["conditions"][0];
  CHECK(cond["type"] == "PodScheduled");
  CHECK(cond["status"] == "False");
  CHECK(cond["reason"] == "Unschedulable");
  CHECK(cond["message"] == "0/4 nodes are unavailable: 4 Insufficient huawei.com/Ascend910.");  // volcano
  const auto events = s.events_of("demo-0-prefill-1-0", "FailedScheduling");
  REQUIRE(events.size() == 1);
  CHECK(events[0]["source"]["component"] == "volcano");
  CHECK(json::parse(s.call("GET", "/api/v1/namespaces/default/events", "",
                           {{"fieldSelector", "source=volcano,type=Warning"}}).body)["items"].size() == 1);
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=prefill,infer.huawei.com/instanceset-index=0")[0]["spec"]
            .contains("nodeName"));
  CHECK(s.get(kMc + "instancesets/demo-0-prefill")["status"]["readyReplicas"] == 1);

  // default-scheduler records through events.k8s.io: eventTime, no timestamps or source, series when repeated.
  s.pod_state({{"namespace", "default"}, {"pod", "demo-0-decode-0-0"}, {"state", "Unschedulable"}});
  s.pod_state({{"namespace", "default"}, {"pod", "demo-0-decode-0-0"}, {"state", "Unschedulable"}});
  const auto def = s.events_of("demo-0-decode-0-0", "FailedScheduling");
  REQUIRE(def.size() == 1);
  CHECK(def[0]["message"] == "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 "
                             "No preemption victims found for incoming pod.");
  CHECK(def[0]["source"] == json::object());
  CHECK(def[0]["firstTimestamp"].is_null());
  CHECK(def[0]["eventTime"].is_string());
  CHECK(def[0]["reportingComponent"] == "default-scheduler");
  CHECK(def[0]["action"] == "Scheduling");
  CHECK(def[0]["series"]["count"] == 2);
  // Scheduled again: a node, the Scheduled event, containers started.
  s.pod_state({{"namespace", "default"}, {"pod", "demo-0-decode-0-0"}, {"state", "Ready"}});
  CHECK(s.pod("demo-0-decode-0-0")["spec"].contains("nodeName"));
  CHECK(s.events_of("demo-0-decode-0-0", "Scheduled").size() == 1);
  CHECK(s.events_of("demo-0-decode-0-0", "Started").size() == 1);
}

TEST_CASE("pod-state: image pulls, crash loops, OOM kills, container creation") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss().dump());
  const json b = {{"namespace", "default"}, {"pod", "demo-0-prefill-0-0"}};
  auto with = [&](const char* state) {
    json body = b;
    body["state"] = state;
    REQUIRE(s.pod_state(body).status == 200);
    return s.pod("demo-0-prefill-0-0");
  };
  json pod = with("ImagePullBackOff");
  json cs = pod["status"]["containerStatuses"][0];
  CHECK(pod["status"]["phase"] == "Pending");
  CHECK(cs["state"]["waiting"]["reason"] == "ImagePullBackOff");
  CHECK(cs["state"]["waiting"]["message"] == "Back-off pulling image \"mindie:1\"");
  CHECK(pod_display_status(pod) == "ImagePullBackOff");
  std::set<std::string> failed;
  for (const auto& e : s.events_of("demo-0-prefill-0-0", "Failed")) failed.insert(e["message"]);
  CHECK(failed.count("Error: ImagePullBackOff") == 1);
  CHECK(failed.count("Error: ErrImagePull") == 1);
  CHECK(s.events_of("demo-0-prefill-0-0", "BackOff")[0]["type"] == "Normal");

  pod = with("CrashLoopBackOff");
  cs = pod["status"]["containerStatuses"][0];
  CHECK(pod["status"]["phase"] == "Running");
  CHECK(cs["restartCount"] == 1);
  CHECK(cs["state"]["waiting"]["reason"] == "CrashLoopBackOff");
  CHECK(cs["lastState"]["terminated"]["reason"] == "Error");
  CHECK(cs["lastState"]["terminated"]["exitCode"] == 1);
  const auto backoff = s.events_of("demo-0-prefill-0-0", "BackOff");
  bool restarting = false;
  for (const auto& e : backoff)
    restarting |= e["message"].get<std::string>().rfind("Back-off restarting failed container e in pod", 0) == 0 &&
                  e["type"] == "Warning";
  CHECK(restarting);
  pod = with("OOMKilled");
  cs = pod["status"]["containerStatuses"][0];
  CHECK(cs["restartCount"] == 2);
  CHECK(cs["lastState"]["terminated"]["reason"] == "OOMKilled");
  CHECK(cs["lastState"]["terminated"]["exitCode"] == 137);
  CHECK(cs["state"]["waiting"]["reason"] == "CrashLoopBackOff");
  CHECK(cs["state"]["waiting"]["message"].get<std::string>().rfind("back-off 20s restarting failed container=e", 0) == 0);
  CHECK(to_table("Pod", {pod}, json::object())["rows"][0]["cells"][3].get<std::string>().rfind("2 (", 0) == 0);

  pod = with("ContainerCreating");
  cs = pod["status"]["containerStatuses"][0];
  CHECK(pod["status"]["phase"] == "Pending");
  CHECK(cs["state"]["waiting"]["reason"] == "ContainerCreating");
  CHECK_FALSE(pod["status"].contains("podIP"));
  CHECK(cs["restartCount"] == 2);  // restarts carry over
  CHECK_FALSE(ready_condition(s.get(kMc + "instancesets/demo-0-prefill")));
  pod = with("Ready");
  CHECK(pod_display_status(pod) == "Running");
  CHECK(ready_condition(s.get(kMc + "instancesets/demo-0-prefill")));
}

TEST_CASE("pod-state: Terminating pods stay until force-deleted; a ReplicaSet replaces them") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss().dump());
  s.pod_state({{"namespace", "default"}, {"pod", "demo-0-prefill-0-0"}, {"state", "Terminating"}});
  json pod = s.pod("demo-0-prefill-0-0");
  CHECK(pod["metadata"].contains("deletionTimestamp"));
  CHECK(pod["metadata"]["deletionGracePeriodSeconds"] == 30);
  CHECK(pod_display_status(pod) == "Terminating");
  CHECK_FALSE(ready_condition(pod));
  REQUIRE(s.call("DELETE", kPods + "/demo-0-prefill-0-0").status == 200);
  CHECK(s.call("GET", kPods + "/demo-0-prefill-0-0").status == 200);  // its kubelet never confirms
  // The StatefulSet waits for the ordinal; scale-in of its workload leaves it behind, still terminating.
  CHECK(s.items(kPods, "infer.huawei.com/instanceset-name=prefill").size() == 2);
  REQUIRE(s.call("DELETE", kPods + "/demo-0-prefill-0-0", "", {{"gracePeriodSeconds", "0"}}).status == 200);
  CHECK(s.pod("demo-0-prefill-0-0")["metadata"].contains("deletionTimestamp") == false);  // recreated

  const json coord = s.items(kPods, "infer.huawei.com/instanceset-name=coordinator");
  const std::string name = coord[0]["metadata"]["name"];
  s.pod_state({{"namespace", "default"}, {"pod", name}, {"state", "Terminating"}});
  const json now = s.items(kPods, "infer.huawei.com/instanceset-name=coordinator");
  CHECK(now.size() == 3);  // the ReplicaSet keeps 2 active pods
  const json deploy = s.get("/apis/apps/v1/namespaces/default/deployments/demo-0-coordinator-0");
  CHECK(deploy["status"]["replicas"] == 2);
  CHECK(s.events_of(name, "TaintManagerEviction").size() == 1);
  // Finalizers hold any object's deletion until they are removed.
  s.call("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"f","finalizers":["x/y"]}})");
  REQUIRE(s.call("DELETE", "/api/v1/namespaces/default/configmaps/f").status == 200);
  CHECK(s.get("/api/v1/namespaces/default/configmaps/f")["metadata"].contains("deletionTimestamp"));
  s.call("PATCH", "/api/v1/namespaces/default/configmaps/f", R"({"metadata":{"finalizers":null}})", {},
         "application/merge-patch+json");
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps/f").status == 404);
}

TEST_CASE("pod-state: bad bodies and no match") {
  Sandbox s;
  s.call("POST", kMc + "inferservicesets", iss().dump());
  CHECK(s.pod_state({{"namespace", "default"}, {"pod", "nope"}, {"state", "Ready"}}).status == 404);
  CHECK(s.pod_state({{"namespace", "default"}, {"role", "nope"}, {"state", "Ready"}}).status == 404);
  CHECK(s.pod_state({{"namespace", "default"}, {"role", "prefill"}, {"instance", 7}, {"state", "Ready"}}).status == 404);
  CHECK(s.pod_state({{"namespace", "default"}, {"role", "prefill"}, {"state", "Sleepy"}}).status == 400);
  CHECK(s.pod_state({{"namespace", "default"}, {"state", "Ready"}}).status == 400);
  CHECK(s.pod_state({{"namespace", "default"}, {"role", "prefill"}, {"pod", "x"}, {"state", "Ready"}}).status == 400);
  CHECK(s.pod_state({{"role", "prefill"}, {"state", "Ready"}}).status == 400);
  CHECK(s.pod_state({{"namespace", "default"}, {"role", "prefill"}, {"instance", "1"}, {"state", "Ready"}}).status ==
        400);
  CHECK(s.pod_state({{"namespace", "default"}, {"role", "prefill"}, {"state", "Ready"}, {"extra", 1}}).status == 400);
  CHECK(s.call("POST", "/sandbox/pod-state", "not json").status == 400);
  const HttpResponse all = s.pod_state({{"namespace", "default"}, {"role", "*"}, {"state", "Ready"}});
  CHECK(json::parse(all.body)["pods"].size() == 5);
}

TEST_CASE("pod-state: --pod-state rules apply to pods as they are created; watches see every change") {
  CHECK(parse_pod_state_rule("*=ContainerCreating").role == "*");
  const PodStateRule one = parse_pod_state_rule("prefill:1=CrashLoopBackOff");
  CHECK(one.role == "prefill");
  CHECK(one.instance == 1);
  CHECK(one.state == PodState::CrashLoopBackOff);
  CHECK_THROWS(parse_pod_state_rule("prefill=Sleepy"));
  CHECK_THROWS(parse_pod_state_rule("=Ready"));
  CHECK_THROWS(parse_pod_state_rule("prefill:x=Ready"));
  CHECK_THROWS(parse_pod_state_rule("prefill"));

  ServerOptions o;
  o.pod_states = {parse_pod_state_rule("*=ContainerCreating"), parse_pod_state_rule("prefill:1=Ready")};
  Sandbox s(o);
  HttpRequest w;
  w.method = "GET";
  w.path = kPods;
  w.authorization = "Bearer t";
  w.params = {{"watch", "1"}};
  auto watch = s.api.handle(w).watch;
  REQUIRE(watch);
  s.call("POST", kMc + "inferservicesets", iss().dump());
  for (const auto& p : s.items(kPods)) {
    const bool exception = p["metadata"]["name"] == "demo-0-prefill-1-0";
    CHECK(pod_display_status(p) == (exception ? "Running" : "ContainerCreating"));
  }
  CHECK(s.get(kMc + "inferservicesets/demo")["status"]["readyReplicas"] == 0);
  s.pod_state({{"namespace", "default"}, {"role", "*"}, {"state", "Ready"}});
  CHECK(s.get(kMc + "instancesets/demo-0-prefill")["status"]["readyReplicas"] == 2);
  std::string out;
  watch->take(out, Watch::Clock::now());
  std::istringstream lines(out);
  std::map<std::string, std::vector<std::string>> seen;  // pod -> TYPE:STATUS in order
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line);
    seen[e["object"]["metadata"]["name"]].push_back(e["type"].get<std::string>() + ":" +
                                                    pod_display_status(e["object"]));
  }
  REQUIRE(seen.size() == 5);
  // Created in their --pod-state (never Running first), then Ready by the control endpoint.
  CHECK(seen["demo-0-prefill-0-0"] == std::vector<std::string>{"ADDED:ContainerCreating", "MODIFIED:Running"});
  CHECK(seen["demo-0-prefill-1-0"] == std::vector<std::string>{"ADDED:Running"});
}

TEST_CASE("operator: a 2,000-pod fleet, listed in pages") {
  Sandbox s;
  json set = iss();
  set["spec"]["template"]["roles"] = {role("prefill", 32, "StatefulSet", 31, engine_container()),
                                      role("decode", 32, "StatefulSet", 32, engine_container())};
  REQUIRE(s.call("POST", kMc + "inferservicesets", set.dump()).status == 201);
  std::set<std::string> names;
  std::string token;
  int pages = 0;
  do {
    std::multimap<std::string, std::string> q{{"limit", "500"},
                                              {"labelSelector", "infer.huawei.com/inferservice-name in (demo-0)"}};
    if (!token.empty()) q.emplace("continue", token);
    const json page = json::parse(s.call("GET", kPods, "", q).body);
    for (const auto& p : page["items"]) names.insert(p["metadata"]["name"]);
    token = page["metadata"].value("continue", "");
    ++pages;
  } while (!token.empty());
  CHECK(names.size() == 32 * 31 + 32 * 32);
  CHECK(pages == 5);
  const json st = s.get(kMc + "inferservicesets/demo")["status"];
  CHECK(st["readyReplicas"] == 1);
  REQUIRE(s.pod_state({{"namespace", "default"}, {"role", "decode"}, {"instance", 31}, {"state", "NotReady"}}).status ==
          200);
  CHECK(s.get(kMc + "instancesets/demo-0-decode")["status"]["readyReplicas"] == 31);
  CHECK(s.get(kMc + "inferservicesets/demo")["status"]["readyReplicas"] == 0);
}
