// kube::denied and rules_grant against the in-memory transport: a namespace's rules review settles what it can, and
// access reviews are sent only for the rest (issue 33: deploy and scale check their rights before any write, in
// few requests).
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "cmd/rights.h"
#include "fake_transport.h"
#include "kube/access_review.h"
#include "kube/retrying_transport.h"

using mindie::kube::Client;
using mindie::kube::ResourceAccess;
using mindie::test::FakeTransport;
namespace json = boost::json;

namespace {

const char* kRules = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
const char* kAccess = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

std::string rules_answer(const std::string& rules, bool incomplete = false) {
  return R"({"kind":"SelfSubjectRulesReview","status":{"resourceRules":)" + rules +
         R"(,"nonResourceRules":[],"incomplete":)" + (incomplete ? "true" : "false") + "}}";
}

std::string path_of(const mindie::kube::HttpRequest& r) { return r.path.substr(0, r.path.find('?')); }

std::string access_answer(bool allowed) {
  return std::string(R"({"kind":"SelfSubjectAccessReview","status":{"allowed":)") + (allowed ? "true" : "false") + "}}";
}

// A namespace admin's rules (the `admin` ClusterRole bound in the namespace), shortened.
const std::string kNamespaceAdmin =
    R"([{"verbs":["create","delete","get","list","patch","update","watch"],"apiGroups":[""],
        "resources":["configmaps","pods","services","serviceaccounts"]},
       {"verbs":["*"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles","rolebindings"]},
       {"verbs":["get"],"apiGroups":["coordination.k8s.io"],"resources":["leases"],"resourceNames":["kubectl-mindie"]}])";

}  // namespace

TEST_CASE("rules_grant matches verbs, groups and resources with wildcards; a rule limited to names grants nothing") {
  const json::array rules = json::parse(kNamespaceAdmin).as_array();
  CHECK(mindie::kube::rules_grant(rules, {"patch", "", "configmaps", "ns"}));
  CHECK(mindie::kube::rules_grant(rules, {"escalate", "rbac.authorization.k8s.io", "roles", "ns"}));
  CHECK_FALSE(mindie::kube::rules_grant(rules, {"patch", "apps", "configmaps", "ns"}));
  CHECK_FALSE(mindie::kube::rules_grant(rules, {"deletecollection", "", "pods", "ns"}));
  CHECK_FALSE(mindie::kube::rules_grant(rules, {"get", "coordination.k8s.io", "leases", "ns"}));
  const json::array all = json::parse(R"([{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}])").as_array();
  CHECK(mindie::kube::rules_grant(all, {"create", "mindcluster.huawei.com", "inferservicesets", "ns"}));
}

TEST_CASE("a complete rules review settles the namespace's rights and denies cluster-wide ones it lacks: 1 request") {
  FakeTransport t;
  t.script_reviews();
  Client c(t);
  t.reply(201, rules_answer(kNamespaceAdmin));
  const std::vector<ResourceAccess> asked = {{"patch", "", "configmaps", "ns"},
                                             {"create", "apps", "deployments", "ns"},
                                             {"create", "rbac.authorization.k8s.io", "clusterroles", ""}};
  const auto denied = mindie::kube::denied(c, asked);
  REQUIRE(t.requests.size() == 1);
  CHECK(t.requests[0].method == "POST");
  CHECK(path_of(t.requests[0]) == kRules);
  CHECK(json::parse(t.requests[0].body).at("spec").at("namespace") == "ns");
  REQUIRE(denied.size() == 2);
  CHECK(denied[0] == asked[1]);
  CHECK(denied[1] == asked[2]);
  CHECK(mindie::cmd::rights::describe(denied) ==
        "create deployments.apps; create clusterroles.rbac.authorization.k8s.io (cluster-wide)");
}

TEST_CASE("cluster-wide rights the namespace's rules grant are asked: first everything at once, then one by one") {
  // A RoleBinding of cluster-admin in the namespace grants "*" there, not cluster-wide.
  const std::string all = R"([{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}])";
  const std::vector<ResourceAccess> asked = {{"patch", "", "configmaps", "ns"},
                                             {"create", "rbac.authorization.k8s.io", "clusterroles", ""},
                                             {"patch", "rbac.authorization.k8s.io", "clusterroles", ""}};
  SUBCASE("a cluster administrator: one access review answers all") {
    FakeTransport t;
    t.script_reviews();
    Client c(t);
    t.reply(201, rules_answer(all)).reply(201, access_answer(true));
    CHECK(mindie::kube::denied(c, asked).empty());
    REQUIRE(t.requests.size() == 2);
    CHECK(path_of(t.requests[1]) == kAccess);
    const json::value attrs = json::parse(t.requests[1].body).at("spec").at("resourceAttributes");
    CHECK(attrs == json::parse(R"({"verb":"*","group":"*","resource":"*"})"));
  }
  SUBCASE("cluster-admin bound in the namespace only: each cluster-wide right asked and denied") {
    FakeTransport t;
    t.script_reviews();
    Client c(t);
    t.reply(201, rules_answer(all)).reply(201, access_answer(false));
    t.reply(201, access_answer(false)).reply(201, access_answer(true));
    const auto denied = mindie::kube::denied(c, asked);
    REQUIRE(t.requests.size() == 4);
    CHECK(json::parse(t.requests[2].body).at("spec").at("resourceAttributes").at("verb") == "create");
    CHECK_FALSE(json::parse(t.requests[2].body).at("spec").at("resourceAttributes").as_object().contains("namespace"));
    REQUIRE(denied.size() == 1);
    CHECK(denied[0] == asked[1]);
  }
}

TEST_CASE("an incomplete rules review (a webhook authorizer) settles only what it grants; the rest is asked") {
  FakeTransport t;
  t.script_reviews();
  Client c(t);
  t.reply(201, rules_answer(kNamespaceAdmin, true)).reply(201, access_answer(true));
  const std::vector<ResourceAccess> asked = {{"patch", "", "configmaps", "ns"},
                                             {"patch", "mindcluster.huawei.com", "inferservicesets", "ns"}};
  CHECK(mindie::kube::denied(c, asked).empty());
  REQUIRE(t.requests.size() == 2);
  const json::value attrs = json::parse(t.requests[1].body).at("spec").at("resourceAttributes");
  CHECK(attrs == json::parse(R"({"verb":"patch","group":"mindcluster.huawei.com","resource":"inferservicesets",
                                 "namespace":"ns"})"));
}

TEST_CASE("reviews the server refuses settle nothing: no right is reported missing") {
  FakeTransport t;
  t.script_reviews();
  Client c(t);
  t.reply(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})");
  t.reply(403, R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})");
  CHECK(mindie::kube::denied(c, {{"patch", "", "configmaps", "ns"}}).empty());
  CHECK(t.requests.size() == 2);
}

TEST_CASE("access reviews are safe to retry: the server stores nothing of them") {
  mindie::kube::HttpRequest req;
  req.method = "POST";
  req.path = kRules;
  CHECK(mindie::kube::is_safe_to_retry(req));
  req.path = kAccess;
  CHECK(mindie::kube::is_safe_to_retry(req));
  req.path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";  // not ours to retry: not asked by the product
  CHECK_FALSE(mindie::kube::is_safe_to_retry(req));
  req.path = "/api/v1/namespaces/ns/configmaps";
  CHECK_FALSE(mindie::kube::is_safe_to_retry(req));
}

TEST_CASE("deploy and scale check only their writes' rights, per deploy mode") {
  using namespace mindie::cmd::rights;
  const auto scale_iss = needed(kScale, true, "ns");
  CHECK(describe(scale_iss) ==
        "patch configmaps; get,create,patch leases.coordination.k8s.io; patch inferservicesets.mindcluster.huawei.com");
  const auto scale_multi = needed(kScale, false, "ns");
  CHECK(describe(scale_multi) ==
        "patch configmaps; create,patch,delete deployments.apps; get,create,patch "
        "leases.coordination.k8s.io");
  const std::string deploy = describe(needed(kDeploy, true, "ns"));
  CHECK(deploy.find("create,patch clusterroles.rbac.authorization.k8s.io (cluster-wide)") != std::string::npos);
  CHECK(deploy.find("get,list,watch nodes (cluster-wide)") != std::string::npos);  // the ClusterRole it grants
  CHECK(deploy.find("delete") == std::string::npos);
  CHECK(deploy.find("deployments") == std::string::npos);
  CHECK(describe(needed(kDeploy | kDeployPrune, false, "ns")).find("delete,create,patch deployments.apps") !=
        std::string::npos);
}

TEST_CASE("--framework aibrix asks only for what its writes need: the lock, create on a new app, delete to prune") {
  using namespace mindie::cmd::rights;
  CHECK(describe(storm_rights({}, "ns")) ==
        "get,create,patch leases.coordination.k8s.io; patch stormservices.orchestration.aibrix.ai; create,patch "
        "services");
  CHECK(describe(storm_rights({false, true, true}, "ns")) ==
        "create,patch stormservices.orchestration.aibrix.ai; create,patch,delete services");
}
