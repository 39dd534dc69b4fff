// The sandbox API server's REST semantics, exercised in process (no sockets).
#include <doctest/doctest.h>

#include "sandbox/api_server.h"
#include "sandbox/apply.h"
#include "sandbox/base64.h"
#include "sandbox/operator_sim.h"
#include "support/openapi_schema.h"

using namespace mindie::sandbox;
using nlohmann::json;

namespace {

struct Sandbox {
  ApiServer api;
  explicit Sandbox(ServerOptions o = {}, bool with_crd = true)
      : api(make_registry(with_crd), (o.token = "t", std::move(o))) {}

  static Registry make_registry(bool with_crd) {
    Registry r(true);
    if (with_crd)
      for (const auto& c : mindie::testing::load_crd_schemas(std::string(MINDIE_SHARED_DIR) +
                                                             "/reference/crds/mindcluster.huawei.com_crds.yaml"))
        r.add_crd(c.group, c.version, c.kind, c.plural, c.namespaced, c.status_subresource, c.schema);
    return r;
  }

  HttpResponse call(const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& content_type = "application/json",
                    std::multimap<std::string, std::string> params = {}) {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.content_type = content_type;
    r.authorization = "Bearer t";
    r.params = std::move(params);
    return api.handle(r);
  }
  json body(const HttpResponse& r) { return json::parse(r.body); }
};

const char* kIssPath = "/apis/mindcluster.huawei.com/v1/namespaces/default/inferservicesets";

json iss(int prefill_replicas = 2) {
  return {{"apiVersion", "mindcluster.huawei.com/v1"},
          {"kind", "InferServiceSet"},
          {"metadata", {{"name", "demo"}}},
          {"spec",
           {{"replicas", 1},
            {"template",
             {{"roles",
               {{{"name", "coordinator"},
                 {"replicas", 1},
                 {"workload", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}}},
                 {"spec", {{"replicas", 2}, {"template", {{"spec", {{"containers", {{{"name", "c"}}}}}}}}}}},
                {{"name", "prefill"},
                 {"replicas", prefill_replicas},
                 {"workload", {{"apiVersion", "apps/v1"}, {"kind", "StatefulSet"}}},
                 {"spec", {{"replicas", 1}, {"template", {{"spec", {{"containers", {{{"name", "e"}}}}}}}}}}}}}}}}}};
}

}  // namespace

TEST_CASE("api server: authentication and Status bodies") {
  Sandbox s;
  HttpRequest r;
  r.method = "GET";
  r.path = "/api/v1/namespaces";
  const HttpResponse res = s.api.handle(r);
  CHECK(res.status == 401);
  const json st = json::parse(res.body);
  CHECK(st["kind"] == "Status");
  CHECK(st["reason"] == "Unauthorized");
  CHECK(st["code"] == 401);
  const json nf = s.body(s.call("GET", "/api/v1/namespaces/default/configmaps/nope"));
  CHECK(nf["reason"] == "NotFound");
  CHECK(nf["message"] == "configmaps \"nope\" not found");
  CHECK(nf["details"]["kind"] == "configmaps");
  CHECK(s.call("GET", "/apis/nope.io/v1").status == 404);
}

TEST_CASE("api server: create, conflicts and missing namespaces") {
  Sandbox s;
  const std::string cm = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"}})";
  const HttpResponse created = s.call("POST", "/api/v1/namespaces/default/configmaps", cm);
  REQUIRE(created.status == 201);
  const json obj = s.body(created);
  CHECK_FALSE(obj["metadata"].contains("generation"));
  CHECK(obj["metadata"]["managedFields"][0]["manager"] == "unknown");
  CHECK(s.body(s.call("POST", "/api/v1/namespaces/default/configmaps", cm))["reason"] == "AlreadyExists");
  const json missing = s.body(s.call("POST", "/api/v1/namespaces/nowhere/configmaps", cm));
  CHECK(missing["code"] == 404);
  CHECK(missing["message"] == "namespaces \"nowhere\" not found");

  json stale = obj;
  stale["metadata"]["resourceVersion"] = "1";
  CHECK(s.call("PUT", "/api/v1/namespaces/default/configmaps/x", stale.dump()).status == 409);
  json fresh = obj;
  fresh["data"]["c"] = "d";
  const json updated = s.body(s.call("PUT", "/api/v1/namespaces/default/configmaps/x", fresh.dump()));
  CHECK(updated["data"]["c"] == "d");
  CHECK(updated["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]);

  const json bad_key = s.body(s.call("POST", "/api/v1/namespaces/default/configmaps",
                                     R"({"metadata":{"name":"y"},"data":{"a/b":"c"}})"));
  CHECK(bad_key["code"] == 422);
  CHECK(bad_key["details"]["causes"][0]["field"] == "data[a/b]");
  json big = {{"metadata", {{"name", "big"}}}, {"data", {{"k", std::string(1024 * 1024 + 1, 'x')}}}};
  CHECK(s.call("POST", "/api/v1/namespaces/default/configmaps", big.dump()).status == 422);
  CHECK(s.call("POST", "/api/v1/namespaces/default/configmaps", "{not json").status == 400);
}

TEST_CASE("api server: custom resources — validation, generation, status subresource") {
  Sandbox s;
  json bad = iss();
  bad["spec"]["replicas"] = "x";
  const json invalid = s.body(s.call("POST", kIssPath, bad.dump()));
  CHECK(invalid["code"] == 422);
  CHECK(invalid["message"].get<std::string>().rfind("InferServiceSet.mindcluster.huawei.com \"demo\" is invalid: ", 0) == 0);

  json with_status = iss();
  with_status["status"] = {{"replicas", 7}};
  const json created = s.body(s.call("POST", kIssPath, with_status.dump()));
  CHECK(created["metadata"]["generation"] == 1);
  CHECK_FALSE(created.contains("status"));  // the main resource ignores status

  json no_rv = created;
  no_rv["metadata"].erase("resourceVersion");
  CHECK(s.call("PUT", std::string(kIssPath) + "/demo", no_rv.dump()).status == 422);

  const std::string patch = R"([{"op":"test","path":"/spec/template/roles/1/name","value":"prefill"},
                                {"op":"replace","path":"/spec/template/roles/1/replicas","value":3}])";
  const json patched = s.body(s.call("PATCH", std::string(kIssPath) + "/demo", patch, "application/json-patch+json"));
  CHECK(patched["metadata"]["generation"] == 2);
  const std::string failing = R"([{"op":"test","path":"/spec/template/roles/1/replicas","value":9},
                                  {"op":"replace","path":"/spec/replicas","value":2}])";
  CHECK(s.call("PATCH", std::string(kIssPath) + "/demo", failing, "application/json-patch+json").status == 422);
  CHECK(s.call("PATCH", std::string(kIssPath) + "/demo", R"({"op":"add"})", "application/json-patch+json").status == 400);
  CHECK(s.call("PATCH", std::string(kIssPath) + "/demo", "{}", "application/strategic-merge-patch+json").status == 415);

  const json st = s.body(s.call("PATCH", std::string(kIssPath) + "/demo/status", R"({"status":{"replicas":1}})",
                                "application/merge-patch+json"));
  CHECK(st["status"]["replicas"] == 1);
  CHECK(st["metadata"]["generation"] == 2);  // status writes do not bump generation
}

TEST_CASE("api server: server-side apply ownership and conflicts") {
  Sandbox s;
  const std::string path = std::string(kIssPath) + "/demo";
  const auto apply = [&](const json& body, const std::string& manager, bool force = false) {
    std::multimap<std::string, std::string> q{{"fieldManager", manager}};
    if (force) q.emplace("force", "true");
    return s.call("PATCH", path, body.dump(), "application/apply-patch+yaml", q);
  };
  CHECK(s.call("PATCH", path, iss().dump(), "application/apply-patch+yaml").status == 422);  // no fieldManager
  CHECK(apply(iss(), "mindie").status == 201);
  CHECK(apply(iss(), "mindie").status == 200);
  // Another writer takes spec.replicas.
  CHECK(s.call("PATCH", path, R"({"spec":{"replicas":2}})", "application/merge-patch+json",
               {{"fieldManager", "scaler"}}).status == 200);
  const HttpResponse conflict = apply(iss(), "mindie");
  REQUIRE(conflict.status == 409);
  const json st = s.body(conflict);
  CHECK(st["reason"] == "Conflict");
  CHECK(st["details"]["causes"][0]["reason"] == "FieldManagerConflict");
  CHECK(st["details"]["causes"][0]["field"] == ".spec.replicas");
  CHECK(st["message"] == "Apply failed with 1 conflict: conflict with \"scaler\" using mindcluster.huawei.com/v1: "
                         ".spec.replicas");
  const json forced = s.body(apply(iss(), "mindie", true));
  CHECK(forced["spec"]["replicas"] == 1);
  // A field the manager stops applying is removed.
  json fewer = iss();
  fewer["metadata"]["labels"] = {{"a", "b"}};
  CHECK(s.body(apply(fewer, "mindie"))["metadata"]["labels"]["a"] == "b");
  CHECK_FALSE(s.body(apply(iss(), "mindie"))["metadata"].contains("labels"));
}

TEST_CASE("api server: dry run, faults, lists with continue") {
  ServerOptions o;
  o.faults.push_back(parse_fault("PATCH:/api/v1/namespaces/[^/]+/configmaps/motor-config:409:1"));
  o.faults.push_back(parse_fault("GET:/api/v1/namespaces/default/pods:429"));
  Sandbox s(o);
  const std::string cm = R"({"metadata":{"name":"motor-config"}})";
  CHECK(s.call("POST", "/api/v1/namespaces/default/configmaps", cm, "application/json", {{"dryRun", "All"}}).status ==
        201);
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps/motor-config").status == 404);
  CHECK(s.call("POST", "/api/v1/namespaces/default/configmaps", cm).status == 201);
  const std::string path = "/api/v1/namespaces/default/configmaps/motor-config";
  CHECK(s.body(s.call("PATCH", path, "{}", "application/merge-patch+json"))["reason"] == "Conflict");
  CHECK(s.call("PATCH", path, "{}", "application/merge-patch+json").status == 200);  // COUNT 1 used up
  const HttpResponse throttled = s.call("GET", "/api/v1/namespaces/default/pods");
  CHECK(throttled.status == 429);
  CHECK(throttled.headers.at(0) == std::pair<std::string, std::string>{"Retry-After", "1"});

  for (const char* n : {"a", "b", "c"})
    s.call("POST", "/api/v1/namespaces/default/configmaps", json{{"metadata", {{"name", n}}}}.dump());
  std::vector<std::string> names;
  std::string token;
  do {
    std::multimap<std::string, std::string> q{{"limit", "2"}};
    if (!token.empty()) q.emplace("continue", token);
    const json page = s.body(s.call("GET", "/api/v1/namespaces/default/configmaps", "", "", q));
    CHECK(page["kind"] == "ConfigMapList");
    for (const auto& i : page["items"]) names.push_back(i["metadata"]["name"]);
    token = page["metadata"].value("continue", "");
  } while (!token.empty());
  CHECK(names == std::vector<std::string>{"a", "b", "c", "motor-config"});
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps", "", "", {{"continue", "garbage!"}}).status == 400);
  CHECK_THROWS(parse_fault("GET:/x"));
}

TEST_CASE("api server: a fault with AFTER lets the first matching requests through") {
  ServerOptions o;
  o.faults.push_back(parse_fault("GET:/api/v1/namespaces/default/configmaps:503:1:2"));
  Sandbox s(o);
  const std::string path = "/api/v1/namespaces/default/configmaps";
  CHECK(s.call("GET", path).status == 200);
  CHECK(s.call("GET", path).status == 200);
  CHECK(s.call("GET", path).status == 503);
  CHECK(s.call("GET", path).status == 200);
}

TEST_CASE("api server: fault kinds hang and drop, any method with *, the request ordinal through AFTER") {
  const Fault hang = parse_fault("PATCH:/api/v1/namespaces/[^/]+/configmaps/a:b:hang:2:1");
  CHECK(hang.disruption == Disruption::Hang);
  CHECK(hang.path_pattern == "/api/v1/namespaces/[^/]+/configmaps/a:b");
  CHECK(hang.remaining == 2);
  CHECK(hang.after == 1);
  const Fault drop = parse_fault("*:.*:drop");
  CHECK(drop.disruption == Disruption::Drop);
  CHECK(drop.remaining == -1);
  const Fault code = parse_fault("GET:/x:8080:503:1:4");  // a regex ending in a number keeps it
  CHECK(code.path_pattern == "/x:8080");
  CHECK(code.code == 503);
  CHECK(code.disruption == Disruption::None);
  CHECK_THROWS(parse_fault("GET:/x:hang:1:2:3"));  // three numbers after the keyword: the code would be 1
  CHECK_THROWS(parse_fault("GET:/x:sleep"));
  CHECK_THROWS(parse_fault(":/x:500"));
  CHECK_THROWS(parse_fault("GET:/x:200"));

  // "*:.*:KIND:1:N" fails exactly the request with ordinal N, whatever its method and path.
  ServerOptions o;
  o.faults.push_back(parse_fault("*:.*:drop:1:2"));
  Sandbox s(o);
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps").status == 200);
  CHECK(s.call("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"x"}})").status == 201);
  const HttpResponse dropped = s.call("DELETE", "/api/v1/namespaces/default/configmaps/x");
  CHECK(dropped.disruption == Disruption::Drop);
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps/x").status == 200);  // the store was not touched
}

TEST_CASE("operator simulation: pods, labels, readiness, scale-in and cascade") {
  ServerOptions o;
  o.simulate_operator = true;
  Sandbox s(o);
  REQUIRE(s.call("POST", kIssPath, iss().dump()).status == 201);
  const auto pods = [&](const std::string& selector) {
    return s.body(s.call("GET", "/api/v1/namespaces/default/pods", "", "", {{"labelSelector", selector}}))["items"];
  };
  const json all = pods("infer.huawei.com/inferservice-name in (demo-0)");
  REQUIRE(all.size() == 4);  // coordinator: 1 instance × 2 pods; prefill: 2 instances × 1 pod
  const json prefill = pods("infer.huawei.com/instanceset-name=prefill,infer.huawei.com/instanceset-index=1");
  REQUIRE(prefill.size() == 1);
  CHECK(prefill[0]["metadata"]["name"] == "demo-0-prefill-1-0");
  const json env = prefill[0]["spec"]["containers"][0]["env"];
  CHECK(env[0] == json{{"name", "INFER_SERVICE_NAME"}, {"value", "demo"}});
  const json coord = pods("infer.huawei.com/instanceset-name=coordinator");
  int ready = 0;
  for (const auto& p : coord) ready += p["status"]["containerStatuses"][0]["ready"].get<bool>();
  CHECK(ready == 1);  // master/standby: only one passes readiness
  const json set = s.body(s.call("GET", std::string(kIssPath) + "/demo"));
  CHECK(set["status"]["replicas"] == 1);
  CHECK(set["status"]["readyReplicas"] == 0);
  CHECK(set["status"]["observedGeneration"] == 1);

  s.call("PATCH", std::string(kIssPath) + "/demo", R"([{"op":"replace","path":"/spec/template/roles/1/replicas","value":1}])",
         "application/json-patch+json");
  CHECK(pods("infer.huawei.com/instanceset-name=prefill").size() == 1);
  CHECK(s.body(s.call("GET", std::string(kIssPath) + "/demo"))["status"]["observedGeneration"] == 2);

  s.call("DELETE", std::string(kIssPath) + "/demo");
  CHECK(pods("").empty());
}

TEST_CASE("managed fields: FieldsV1 round trip") {
  const FieldSet fields = {{"spec", "replicas"}, {"spec", "template", "roles"}, {"metadata", "labels", "a"}};
  const json v1 = to_fields_v1(fields);
  CHECK(v1["f:spec"]["f:template"]["f:roles"] == json::object());
  CHECK(from_fields_v1(v1) == fields);
  CHECK(path_string({"spec", "replicas"}) == ".spec.replicas");
}

TEST_CASE("store: one revision counter and an event history for watches") {
  Store st;
  const std::uint64_t start = st.revision();
  const json a = st.put("/configmaps", {{"metadata", {{"name", "a"}, {"namespace", "default"}}}});
  const json a2 = st.put("/configmaps", {{"metadata", {{"name", "a"}, {"namespace", "default"}}}, {"data", {{"k", "v"}}}});
  CHECK(std::stoull(a2["metadata"]["resourceVersion"].get<std::string>()) >
        std::stoull(a["metadata"]["resourceVersion"].get<std::string>()));
  CHECK(st.remove("/configmaps", "default", "a").has_value());
  CHECK_FALSE(st.remove("/configmaps", "default", "a").has_value());
  const auto events = st.events_since(start);
  REQUIRE(events.has_value());
  REQUIRE(events->size() == 3);
  CHECK((*events)[0].type == StoreEvent::Type::Added);
  CHECK((*events)[1].type == StoreEvent::Type::Modified);
  CHECK((*events)[2].type == StoreEvent::Type::Deleted);
  CHECK(st.events_since(st.revision())->empty());
}

TEST_CASE("sandbox base64: round trips and rejects what is not base64") {
  using mindie::sandbox::base64_decode;
  using mindie::sandbox::base64_encode;
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  for (const std::string& s : {std::string(""), std::string("a"), std::string("ab"), std::string("abc"),
                              std::string("\0\xff\x10", 3)})
    CHECK(base64_decode(base64_encode(s)) == s);
  CHECK_FALSE(base64_decode("garbage!"));
  CHECK_FALSE(base64_decode("Zg="));
}
