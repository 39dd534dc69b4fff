// The REST client against a scripted transport: paths, queries, content types, paging and Status errors.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <string>

#include "fake_transport.h"
#include "kube/client.h"

namespace json = boost::json;
using mindie::kube::ApiError;
using mindie::kube::Client;
using mindie::kube::PatchType;
using mindie::kube::WriteOptions;
using mindie::test::FakeTransport;
namespace gvr = mindie::kube::gvr;

namespace {

// The ApiError raised by `f`; fails the test when none is raised.
template <typename F>
ApiError api_error(F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e;
  }
  FAIL("no ApiError was raised");
  throw std::logic_error("unreachable");
}

json::object configmap(const std::string& ns, const std::string& name) {
  return json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"(","namespace":")" +
                     ns + R"("},"data":{"k":"v"}})")
      .as_object();
}

}  // namespace

TEST_CASE("GVR: apiVersion and kind.group as kubectl prints them") {
  CHECK(gvr::kConfigMaps.api_version() == "v1");
  CHECK(gvr::kConfigMaps.kind_dot_group() == "configmap");
  CHECK(gvr::kDeployments.api_version() == "apps/v1");
  CHECK(gvr::kDeployments.kind_dot_group() == "deployment.apps");
  CHECK(gvr::kInferServiceSets.api_version() == "mindcluster.huawei.com/v1");
  CHECK(gvr::kInferServiceSets.kind_dot_group() == "inferserviceset.mindcluster.huawei.com");
  CHECK(gvr::kClusterRoleBindings.api_version() == "rbac.authorization.k8s.io/v1");
}

TEST_CASE("gvr::for_kind finds the known kinds by apiVersion and kind") {
  CHECK(gvr::for_kind("v1", "ConfigMap") == &gvr::kConfigMaps);
  CHECK(gvr::for_kind("v1", "ServiceAccount") == &gvr::kServiceAccounts);
  CHECK(gvr::for_kind("apps/v1", "StatefulSet") == &gvr::kStatefulSets);
  CHECK(gvr::for_kind("rbac.authorization.k8s.io/v1", "ClusterRole") == &gvr::kClusterRoles);
  CHECK(gvr::for_kind("rbac.authorization.k8s.io/v1", "Role") == &gvr::kRoles);
  CHECK(gvr::for_kind("rbac.authorization.k8s.io/v1", "RoleBinding") == &gvr::kRoleBindings);
  CHECK(Client::path(gvr::kRoleBindings, "ns", "b") ==
        "/apis/rbac.authorization.k8s.io/v1/namespaces/ns/rolebindings/b");
  CHECK(gvr::for_kind("mindcluster.huawei.com/v1", "InferServiceSet") == &gvr::kInferServiceSets);
  CHECK(gvr::for_kind("apps/v1", "ConfigMap") == nullptr);
  CHECK(gvr::for_kind("v1", "Secret") == nullptr);
  CHECK_FALSE(gvr::kClusterRoles.namespaced);
  CHECK_FALSE(gvr::kNamespaces.namespaced);
  CHECK(gvr::kPods.namespaced);
}

TEST_CASE("Client::path: core vs named groups, namespaced vs cluster-scoped") {
  CHECK(Client::path(gvr::kConfigMaps, "ns", "motor-config") == "/api/v1/namespaces/ns/configmaps/motor-config");
  CHECK(Client::path(gvr::kConfigMaps, "ns") == "/api/v1/namespaces/ns/configmaps");
  CHECK(Client::path(gvr::kConfigMaps, "") == "/api/v1/configmaps");  // all namespaces
  CHECK(Client::path(gvr::kStatefulSets, "ns", "s") == "/apis/apps/v1/namespaces/ns/statefulsets/s");
  CHECK(Client::path(gvr::kInferServiceSets, "ns", "x") ==
        "/apis/mindcluster.huawei.com/v1/namespaces/ns/inferservicesets/x");
  CHECK(Client::path(gvr::kClusterRoles, "ignored", "r") == "/apis/rbac.authorization.k8s.io/v1/clusterroles/r");
  CHECK(Client::path(gvr::kNamespaces, "", "ns") == "/api/v1/namespaces/ns");
}

TEST_CASE("url_encode keeps unreserved characters and escapes the rest") {
  CHECK(mindie::kube::url_encode("a-b_c.d~e09") == "a-b_c.d~e09");
  CHECK(mindie::kube::url_encode("app=x,tier in (a,b)") == "app%3Dx%2Ctier%20in%20%28a%2Cb%29");
  CHECK(mindie::kube::url_encode("\xff/") == "%FF%2F");
}

TEST_CASE("get returns the object; get_if_exists maps NotFound to nullopt only") {
  FakeTransport t;
  Client c(t);
  t.reply(200, json::serialize(configmap("ns", "cm")));
  const json::object got = c.get(gvr::kConfigMaps, "ns", "cm");
  CHECK(got.at("data").at("k") == "v");
  REQUIRE(t.requests.size() == 1);
  CHECK(t.requests[0].method == "GET");
  CHECK(t.requests[0].path == "/api/v1/namespaces/ns/configmaps/cm");
  CHECK(t.requests[0].body.empty());
  CHECK(t.requests[0].accept == "application/json");

  t.reply(404, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,
                   "message":"configmaps \"gone\" not found"})");
  CHECK_FALSE(c.get_if_exists(gvr::kConfigMaps, "ns", "gone").has_value());
  t.reply(200, json::serialize(configmap("ns", "cm")));
  CHECK(c.get_if_exists(gvr::kConfigMaps, "ns", "cm").has_value());
  t.reply(403, R"({"kind":"Status","reason":"Forbidden","code":403,"message":"configmaps \"cm\" is forbidden"})");
  CHECK(api_error([&] { c.get_if_exists(gvr::kConfigMaps, "ns", "cm"); }).reason() == "Forbidden");
  CHECK(c.requests_sent() == 4);
}

TEST_CASE("a 2xx answer whose body is not a JSON object is a runtime_error naming the path") {
  FakeTransport t;
  Client c(t);
  for (const char* body : {"<html>ok</html>", "[1,2]", ""}) {
    CAPTURE(body);
    t.reply(200, body);
    try {
      c.get(gvr::kPods, "ns", "p");
      FAIL("no error raised");
    } catch (const ApiError&) {
      FAIL("an ApiError is for error statuses only");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find("/api/v1/namespaces/ns/pods/p") != std::string::npos);
    }
  }
}

TEST_CASE("list follows continue tokens with the same selector and limit, concatenating items") {
  FakeTransport t;
  Client c(t);
  t.reply(200, R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10","continue":"tok 1"},
                   "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
  t.reply(200, R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10","continue":"tok2"},
                   "items":[]})");  // a page may be empty
  t.reply(200, R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"11"},
                   "items":[{"metadata":{"name":"c"}}]})");
  const json::object list = c.list(gvr::kPods, "ns", "app=motor,role in (p,d)", 2);
  REQUIRE(t.requests.size() == 3);
  const std::string base = "/api/v1/namespaces/ns/pods?labelSelector=app%3Dmotor%2Crole%20in%20%28p%2Cd%29&limit=2";
  CHECK(t.requests[0].path == base);
  CHECK(t.requests[1].path == base + "&continue=tok%201");
  CHECK(t.requests[2].path == base + "&continue=tok2");
  const json::array& items = list.at("items").as_array();
  REQUIRE(items.size() == 3);
  CHECK(items[0].at("metadata").at("name") == "a");
  CHECK(items[2].at("metadata").at("name") == "c");
  CHECK(list.at("kind") == "PodList");
  CHECK(list.at("metadata").at("resourceVersion") == "11");
  CHECK(c.requests_sent() == 3);
  CHECK(t.pending() == 0);
}

TEST_CASE("list without selector or limit sends a bare collection GET") {
  FakeTransport t;
  Client c(t);
  t.reply(200, R"({"kind":"ClusterRoleList","metadata":{},"items":[]})");
  const json::object list = c.list(gvr::kClusterRoles, "ns", "", 0);
  CHECK(t.requests.at(0).path == "/apis/rbac.authorization.k8s.io/v1/clusterroles");
  CHECK(list.at("items").as_array().empty());
}

TEST_CASE("list stops with an error when the server repeats a continue token or sends bad items") {
  FakeTransport t;
  Client c(t);
  t.reply(200, R"({"metadata":{"continue":"same"},"items":[]})");
  t.reply(200, R"({"metadata":{"continue":"same"},"items":[]})");
  CHECK_THROWS_AS(c.list(gvr::kPods, "ns"), std::runtime_error);
  CHECK(t.requests.size() == 2);
  t.reply(200, R"({"metadata":{},"items":{"not":"an array"}})");
  CHECK_THROWS_AS(c.list(gvr::kPods, "ns"), std::runtime_error);
}

TEST_CASE("apply sends a server-side apply PATCH with fieldManager, force and dryRun") {
  FakeTransport t;
  Client c(t);
  const json::object obj = configmap("ns", "motor-config");
  t.reply(200, json::serialize(obj));
  WriteOptions opts;
  opts.force = true;
  opts.dry_run = true;
  c.apply(gvr::kConfigMaps, obj, opts);
  REQUIRE(t.requests.size() == 1);
  const auto& req = t.requests[0];
  CHECK(req.method == "PATCH");
  CHECK(req.path == "/api/v1/namespaces/ns/configmaps/motor-config?fieldManager=kubectl-mindie&force=true&dryRun=All");
  CHECK(req.content_type == "application/apply-patch+yaml");
  CHECK(json::parse(req.body) == obj);

  t.reply(201, json::serialize(obj));
  WriteOptions plain;
  plain.field_manager = "someone else";
  c.apply(gvr::kConfigMaps, obj, plain);
  CHECK(t.requests[1].path == "/api/v1/namespaces/ns/configmaps/motor-config?fieldManager=someone%20else");
}

TEST_CASE("apply and create refuse objects that cannot be addressed, without sending anything") {
  FakeTransport t;
  Client c(t);
  CHECK_THROWS_AS(c.apply(gvr::kConfigMaps, json::parse(R"({"metadata":{"name":"x"}})").as_object()),
                  std::invalid_argument);
  CHECK_THROWS_AS(c.apply(gvr::kConfigMaps, json::parse(R"({"metadata":{"namespace":"ns"}})").as_object()),
                  std::invalid_argument);
  CHECK_THROWS_AS(c.create(gvr::kConfigMaps, json::parse(R"({"metadata":"bad shape"})").as_object()),
                  std::invalid_argument);
  CHECK(t.requests.empty());
  // Cluster-scoped objects need no namespace.
  t.reply(201, R"({"metadata":{"name":"r"}})");
  c.apply(gvr::kClusterRoles, json::parse(R"({"metadata":{"name":"r"}})").as_object());
  CHECK(t.requests.at(0).path == "/apis/rbac.authorization.k8s.io/v1/clusterroles/r?fieldManager=kubectl-mindie");
}

TEST_CASE("patch uses the JSON Patch or merge-patch content type and passes dryRun") {
  FakeTransport t;
  Client c(t);
  const json::value ops = json::parse(R"([{"op":"test","path":"/spec/template/roles/0/name","value":"prefill"},
                                          {"op":"replace","path":"/spec/template/roles/0/replicas","value":3}])");
  t.reply(200, "{}");
  WriteOptions opts;
  opts.dry_run = true;
  opts.force = true;  // meaningless outside apply: not sent
  c.patch(gvr::kInferServiceSets, "ns", "x", PatchType::Json, ops, opts);
  CHECK(t.requests[0].method == "PATCH");
  CHECK(t.requests[0].content_type == "application/json-patch+json");
  CHECK(t.requests[0].path ==
        "/apis/mindcluster.huawei.com/v1/namespaces/ns/inferservicesets/x?fieldManager=kubectl-mindie&dryRun=All");
  CHECK(json::parse(t.requests[0].body) == ops);

  t.reply(200, "{}");
  c.patch(gvr::kConfigMaps, "ns", "cm", PatchType::Merge, json::parse(R"({"data":{"k":null}})"));
  CHECK(t.requests[1].content_type == "application/merge-patch+json");
  CHECK(t.requests[1].path == "/api/v1/namespaces/ns/configmaps/cm?fieldManager=kubectl-mindie");
}

TEST_CASE("create POSTs to the collection; remove DELETEs the object") {
  FakeTransport t;
  Client c(t);
  t.reply(201, json::serialize(configmap("ns", "cm")));
  c.create(gvr::kConfigMaps, configmap("ns", "cm"));
  CHECK(t.requests[0].method == "POST");
  CHECK(t.requests[0].path == "/api/v1/namespaces/ns/configmaps?fieldManager=kubectl-mindie");
  CHECK(t.requests[0].content_type == "application/json");
  CHECK(json::parse(t.requests[0].body) == configmap("ns", "cm"));

  t.reply(200, R"({"kind":"Status","status":"Success"})");
  WriteOptions opts;
  opts.dry_run = true;
  c.remove(gvr::kStatefulSets, "ns", "s", opts);
  CHECK(t.requests[1].method == "DELETE");
  CHECK(t.requests[1].path == "/apis/apps/v1/namespaces/ns/statefulsets/s?dryRun=All");
  CHECK(t.requests[1].body.empty());
}

TEST_CASE("ApiError decodes a Status: reason, message, causes, and renders them with the request") {
  FakeTransport t;
  Client c(t);
  t.reply(422, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"InferServiceSet.mindcluster.huawei.com \"x\" is invalid: [spec.replicas: Invalid value: -1: must be >= 0, spec.template.roles: Required value]",
    "reason":"Invalid","details":{"name":"x","group":"mindcluster.huawei.com","kind":"InferServiceSet","causes":[
      {"reason":"FieldValueInvalid","message":"Invalid value: -1: must be >= 0","field":"spec.replicas"},
      {"reason":"FieldValueRequired","message":"Required value","field":"spec.template.roles"},
      {"reason":"Other","message":"no field here"}]},"code":422})");
  const ApiError e = api_error([&] {
    c.patch(gvr::kInferServiceSets, "ns", "x", PatchType::Merge, json::parse(R"({"spec":{"replicas":-1}})"));
  });
  CHECK(e.code() == 422);
  CHECK(e.reason() == "Invalid");
  CHECK(e.is_invalid());
  CHECK_FALSE(e.is_not_found());
  REQUIRE(e.causes().size() == 3);
  CHECK(e.causes()[0].field == "spec.replicas");
  CHECK(e.causes()[1].reason == "FieldValueRequired");
  CHECK(e.method() == "PATCH");
  CHECK(e.path() == "/apis/mindcluster.huawei.com/v1/namespaces/ns/inferservicesets/x?fieldManager=kubectl-mindie");
  CHECK(e.render() ==
        "Error from server (Invalid): InferServiceSet.mindcluster.huawei.com \"x\" is invalid: [spec.replicas: "
        "Invalid value: -1: must be >= 0, spec.template.roles: Required value]\n"
        "* spec.replicas: Invalid value: -1: must be >= 0\n"
        "* spec.template.roles: Required value\n"
        "* no field here\n"
        "(HTTP 422, PATCH /apis/mindcluster.huawei.com/v1/namespaces/ns/inferservicesets/x)");
  CHECK(std::string(e.what()) == e.render());
}

TEST_CASE("ApiError renders NotFound and Conflict like kubectl") {
  FakeTransport t;
  Client c(t);
  t.reply(404, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"configmaps \"motor-config\" not found","reason":"NotFound",
    "details":{"name":"motor-config","kind":"configmaps"},"code":404})");
  const ApiError nf = api_error([&] { c.get(gvr::kConfigMaps, "ns", "motor-config"); });
  CHECK(nf.is_not_found());
  CHECK(nf.render() ==
        "Error from server (NotFound): configmaps \"motor-config\" not found\n"
        "(HTTP 404, GET /api/v1/namespaces/ns/configmaps/motor-config)");

  t.reply(409, R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,
    "message":"Apply failed with 1 conflict: conflict with \"kubectl-edit\": .spec.replicas",
    "details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"kubectl-edit\"","field":".spec.replicas"}]}})");
  const ApiError conflict = api_error([&] { c.apply(gvr::kConfigMaps, configmap("ns", "cm")); });
  CHECK(conflict.is_conflict());
  CHECK(conflict.render().find("\n* .spec.replicas: conflict with \"kubectl-edit\"\n") != std::string::npos);
}

TEST_CASE("ApiError from a non-Status body takes its reason from the HTTP code") {
  const std::pair<int, const char*> codes[] = {{401, "Unauthorized"},  {403, "Forbidden"},
                                               {404, "NotFound"},      {409, "Conflict"},
                                               {422, "Invalid"},       {429, "TooManyRequests"},
                                               {500, "InternalError"}, {503, "ServiceUnavailable"},
                                               {418, "Unknown"},       {502, "Unknown"}};
  for (const auto& [code, reason] : codes) {
    CAPTURE(code);
    FakeTransport t;
    Client c(t);
    t.reply(code, "<html><body>" + std::string(300, 'x') + "</body></html>");
    const ApiError e = api_error([&] { c.get(gvr::kPods, "ns", "p"); });
    CHECK(e.code() == code);
    CHECK(e.reason() == reason);
    CHECK(e.status_message().size() == 200);
    CHECK(e.status_message().rfind("<html><body>xxx", 0) == 0);
    CHECK(e.causes().empty());
    CHECK(e.render().find("(HTTP " + std::to_string(code) + ", GET /api/v1/namespaces/ns/pods/p)") !=
          std::string::npos);
  }
  // JSON that is not a Status, and an empty body, are treated the same way.
  FakeTransport t;
  Client c(t);
  t.reply(500, R"({"error":"boom"})");
  CHECK(api_error([&] { c.get(gvr::kPods, "ns", "p"); }).status_message() == R"({"error":"boom"})");
  t.reply(503, "");
  const ApiError empty = api_error([&] { c.get(gvr::kPods, "ns", "p"); });
  CHECK(empty.reason() == "ServiceUnavailable");
  CHECK_FALSE(empty.status_message().empty());
}

TEST_CASE("ApiError: a Status without reason gets the code's; Retry-After comes from header or details") {
  FakeTransport t;
  Client c(t);
  t.reply(429, R"({"kind":"Status","message":"slow down","code":429,"details":{"retryAfterSeconds":7}})");
  const ApiError e = api_error([&] { c.get(gvr::kPods, "ns", "p"); });
  CHECK(e.reason() == "TooManyRequests");
  CHECK(e.retry_after_seconds() == 7);
  t.reply(503, R"({"kind":"Status","reason":"ServiceUnavailable","message":"later","code":503})",
          {{"retry-after", "3"}});
  CHECK(api_error([&] { c.get(gvr::kPods, "ns", "p"); }).retry_after_seconds() == 3);
  t.reply(503, "down", {{"retry-after", "-4"}});
  CHECK(api_error([&] { c.get(gvr::kPods, "ns", "p"); }).retry_after_seconds() == 0);
}

TEST_CASE("has_group_version: 200 true, 404 false, anything else throws") {
  FakeTransport t;
  Client c(t);
  t.reply(200, R"({"kind":"APIResourceList","groupVersion":"mindcluster.huawei.com/v1","resources":[]})");
  CHECK(c.has_group_version("mindcluster.huawei.com", "v1"));
  CHECK(t.requests[0].method == "GET");
  CHECK(t.requests[0].path == "/apis/mindcluster.huawei.com/v1");
  t.reply(404, "404 page not found");
  CHECK_FALSE(c.has_group_version("mindcluster.huawei.com", "v1"));
  t.reply(500, R"({"kind":"Status","reason":"InternalError","message":"etcd down","code":500})");
  const ApiError e = api_error([&] { c.has_group_version("apps", "v1"); });
  CHECK(e.reason() == "InternalError");
  CHECK(e.path() == "/apis/apps/v1");
  t.reply(200, R"({"kind":"APIResourceList","groupVersion":"v1"})");
  CHECK(c.has_group_version("", "v1"));
  CHECK(t.requests[3].path == "/api/v1");
  CHECK(c.requests_sent() == 4);
}

TEST_CASE("transport failures pass through the client unchanged") {
  FakeTransport t;
  Client c(t);
  t.fail("Unable to connect to the server https://fake.example:6443: Connection refused");
  CHECK_THROWS_AS(c.get(gvr::kPods, "ns", "p"), mindie::kube::TransportError);
  CHECK(c.requests_sent() == 1);
}

TEST_CASE("remove_exact sends uid and resourceVersion preconditions, and dryRun in the body the server reads") {
  FakeTransport t;
  t.reply(200, R"({"kind":"Status","status":"Success"})");
  t.reply(200, R"({"kind":"Status","status":"Success"})");
  Client client(t);
  client.remove_exact(gvr::kConfigMaps, "ns", "motor-config", "uid-1", "41");
  WriteOptions dry;
  dry.dry_run = true;
  client.remove_exact(gvr::kDeployments, "ns", "engine-0", "uid-2", "", dry);
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[0].method == "DELETE");
  const json::object first = json::parse(t.requests[0].body).as_object();
  CHECK(first.at("preconditions") == json::object{{"uid", "uid-1"}, {"resourceVersion", "41"}});
  CHECK_FALSE(first.contains("dryRun"));
  // A DELETE with a body has its DeleteOptions read from the body alone (kube-apiserver handlers/delete.go): a
  // dryRun only in the query would delete for real.
  const json::object second = json::parse(t.requests[1].body).as_object();
  CHECK(second.at("preconditions") == json::object{{"uid", "uid-2"}});
  CHECK(second.at("dryRun") == json::array{"All"});
  CHECK(t.requests[1].path.find("dryRun=All") != std::string::npos);
}

TEST_CASE("resource_version_of names the object whose answer lacks one, instead of out_of_range") {
  CHECK(mindie::kube::resource_version_of(json::parse(R"({"metadata":{"resourceVersion":"7"}})").as_object(), "x") ==
        "7");
  CHECK_THROWS_WITH(mindie::kube::resource_version_of(json::parse(R"({"metadata":{}})").as_object(),
                                                      "configmap/motor-config"),
                    doctest::Contains("configmap/motor-config has no metadata.resourceVersion"));
}
