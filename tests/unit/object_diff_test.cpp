// kube::without_server_fields and diff_file_name: what diff leaves out of an object and how it names its file.
#include "kube/object_diff.h"

#include <doctest/doctest.h>

namespace json = boost::json;

TEST_CASE("without_server_fields drops what the server writes and keeps what the user sets") {
  const auto obj = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d","namespace":"ns","labels":{"a":"b"},"annotations":{"x":"y"},
      "managedFields":[{"manager":"kubectl-mindie"}],"resourceVersion":"7","uid":"u","generation":3,
      "creationTimestamp":"2026-12-05T00:00:00Z","selfLink":"/apis/apps/v1/namespaces/ns/deployments/d"},
    "spec":{"replicas":2},"status":{"readyReplicas":2}})")
                       .as_object();
  CHECK(mindie::kube::without_server_fields(obj) == json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d","namespace":"ns","labels":{"a":"b"},"annotations":{"x":"y"}},
    "spec":{"replicas":2}})"));
  // An object of another shape is left as it is.
  CHECK(mindie::kube::without_server_fields(json::object{{"metadata", 1}}) == json::object{{"metadata", 1}});
}

TEST_CASE("diff_file_name is kubectl diff's <group>.<version>.<Kind>.<namespace>.<name>") {
  using mindie::kube::diff_file_name;
  CHECK(diff_file_name(json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d","namespace":"ns"}})")
                           .as_object()) == "apps.v1.Deployment.ns.d");
  CHECK(diff_file_name(json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
    "metadata":{"name":"motor-config","namespace":"ns"}})")
                           .as_object()) == "v1.ConfigMap.ns.motor-config");
  CHECK(diff_file_name(json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
    "metadata":{"name":"r"}})")
                           .as_object()) == "rbac.authorization.k8s.io.v1.ClusterRole..r");
}
