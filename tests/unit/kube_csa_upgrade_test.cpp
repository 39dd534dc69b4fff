// kube::csa_upgrade_patch: handing the fields client-side `kubectl apply` owns to a server-side apply manager
// (client-go csaupgrade's rule), and the FieldsV1 union it relies on.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "kube/csa_upgrade.h"

using namespace mindie;
namespace json = boost::json;

namespace {

// An object as the API server returns it after `kubectl apply` (client-side) and, optionally, other writers.
json::object live(const char* managed_fields, bool annotation = true) {
  json::object o = json::parse(std::string(R"({"metadata":{"name":"motor-config","resourceVersion":"41",)") +
                               R"("managedFields":)" + managed_fields + "}}")
                       .as_object();
  if (annotation)
    o["metadata"].as_object()["annotations"] = json::object{{"kubectl.kubernetes.io/last-applied-configuration", "{}"},
                                                            {"keep", "me"}};
  return o;
}

const char* kCsaOnly = R"([{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1",
  "fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:boot.sh":{}},"f:metadata":{"f:annotations":{".":{},
  "f:kubectl.kubernetes.io/last-applied-configuration":{}}}}}])";

}  // namespace

TEST_CASE("union_field_sets merges tries key by key") {
  const json::object a = json::parse(R"({"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:x":{}}}})").as_object();
  const json::object b = json::parse(R"({"f:data":{".":{},"f:b":{}},"f:spec":{}})").as_object();
  CHECK(json::value(kube::union_field_sets(a, b)) ==
        json::parse(R"({"f:data":{"f:a":{},".":{},"f:b":{}},"f:metadata":{"f:labels":{"f:x":{}}},"f:spec":{}})"));
}

TEST_CASE("an object client-side apply wrote: its entry becomes the Apply entry, the annotation goes") {
  const auto patch = kube::csa_upgrade_patch(live(kCsaOnly), "kubectl-mindie");
  REQUIRE(patch);
  REQUIRE(patch->size() == 3);
  CHECK((*patch)[0] == json::parse(R"({"op":"test","path":"/metadata/resourceVersion","value":"41"})"));
  const json::object& replace = (*patch)[1].as_object();
  CHECK(replace.at("path") == "/metadata/managedFields");
  const json::array& entries = replace.at("value").as_array();
  REQUIRE(entries.size() == 1);
  const json::object& e = entries[0].as_object();
  CHECK(e.at("manager") == "kubectl-mindie");
  CHECK(e.at("operation") == "Apply");
  // The annotation's field and the then-childless annotations node are gone; the data keys are ours now.
  CHECK(e.at("fieldsV1") ==
        json::parse(R"({"f:data":{".":{},"f:boot.sh":{}},"f:metadata":{"f:annotations":{".":{}}}})"));
  CHECK((*patch)[2] ==
        json::parse(
            R"({"op":"remove","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"})"));
}

TEST_CASE("an existing Apply entry receives the client-side fields; other managers stay as they are") {
  const auto patch =
      kube::csa_upgrade_patch(live(R"([{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1",
                "subresource":"status","fieldsV1":{"f:status":{}}},
               {"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"apps/v1",
                "fieldsV1":{"f:metadata":{"f:labels":{"f:job-name":{}}}}},
               {"manager":"kubectl-mindie","operation":"Apply","apiVersion":"apps/v1",
                "fieldsV1":{"f:spec":{"f:replicas":{}}}},
               {"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"apps/v1",
                "subresource":"scale","fieldsV1":{"f:spec":{}}}])",
                                   false),
                              "kubectl-mindie");
  REQUIRE(patch);
  REQUIRE(patch->size() == 2);  // no annotation to remove
  const json::array& entries = (*patch)[1].as_object().at("value").as_array();
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].as_object().at("manager") == "kube-controller-manager");
  CHECK(entries[1].as_object().at("fieldsV1") ==
        json::parse(R"({"f:spec":{"f:replicas":{}},"f:metadata":{"f:labels":{"f:job-name":{}}}})"));
  // An entry for a subresource is not client-side apply's record of the object: kept.
  CHECK(entries[2].as_object().at("subresource") == "scale");
}

TEST_CASE("a client-side entry of another apiVersion is dropped, its fields not merged") {
  const auto patch = kube::csa_upgrade_patch(
      live(R"([{"manager":"kubectl-mindie","operation":"Apply","apiVersion":"v2","fieldsV1":{"f:a":{}}},
               {"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","fieldsV1":{"f:b":{}}}])",
           false),
      "kubectl-mindie");
  REQUIRE(patch);
  const json::array& entries = (*patch)[1].as_object().at("value").as_array();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].as_object().at("fieldsV1") == json::parse(R"({"f:a":{}})"));
}

TEST_CASE("nothing to hand over: no patch; only a stale annotation: it alone is removed") {
  CHECK_FALSE(kube::csa_upgrade_patch(
      live(R"([{"manager":"kubectl-mindie","operation":"Apply","apiVersion":"v1","fieldsV1":{}}])", false),
      "kubectl-mindie"));
  CHECK_FALSE(kube::csa_upgrade_patch(json::object{}, "kubectl-mindie"));
  const auto patch = kube::csa_upgrade_patch(live("[]"), "kubectl-mindie");
  REQUIRE(patch);
  REQUIRE(patch->size() == 2);
  CHECK((*patch)[1].as_object().at("op") == "remove");
}

TEST_CASE("server answers of the wrong shape do not crash the upgrade") {
  json::object o = json::parse(R"({"metadata":{"managedFields":[7,"x",
    {"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":"not an object"}]}})")
                       .as_object();
  const auto patch = kube::csa_upgrade_patch(o, "kubectl-mindie");
  REQUIRE(patch);
  const json::array& entries = (*patch)[1].as_object().at("value").as_array();
  REQUIRE(entries.size() == 3);
  CHECK(entries[2].as_object().at("fieldsV1") == json::object{});
  CHECK((*patch)[0].as_object().at("value") == "");
}
