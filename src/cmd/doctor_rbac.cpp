// doctor's rights (cmd/doctor_checks.h: rights, rbac_manifest): what a deploying user needs, asked with one
// SelfSubjectAccessReview per verb, and the Role and ClusterRole --print-rbac prints, from one table.
#include <boost/json.hpp>

#include "cmd/doctor_checks.h"
#include "util/strings.h"

namespace mindie::cmd::doctor {

namespace json = boost::json;

namespace {

const kube::GVR kAccessReviews{"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
                               false};

/// Which deploy modes need a right or an API.
enum class Modes { All, ServiceSet, Deployments };

/// One resource a deploying user acts on, and how.
struct Right {
  const char* group;
  const char* resource;
  std::vector<const char*> verbs;
  bool cluster_wide;  ///< cluster-scoped, or listed in all namespaces
  Modes modes;
};

/// What deploy, scale, update-config, status, wait and delete send (README "The controller's rights" covers what
/// the controller's own ServiceAccount gets). A user who grants the controller's Role must hold its rights too:
/// RBAC refuses an escalation (kubernetes/kubernetes pkg/registry/rbac/escalation_check.go).
const std::vector<Right>& deploy_rights() {
  static const std::vector<Right> rights = {
      {"", "configmaps", {"get", "list", "watch", "create", "patch", "delete"}, false, Modes::All},
      {"", "serviceaccounts", {"get", "list", "create", "patch", "delete"}, false, Modes::All},
      {"", "pods", {"get", "list", "watch"}, false, Modes::All},
      {"", "events", {"list", "watch"}, false, Modes::All},
      {"", "services", {"get", "list", "watch", "delete"}, false, Modes::All},
      {"", "services", {"create", "patch"}, false, Modes::Deployments},
      {"apps", "deployments", {"get", "list", "watch", "delete"}, false, Modes::All},
      {"apps", "deployments", {"create", "patch"}, false, Modes::Deployments},
      {"apps", "statefulsets", {"list", "watch"}, false, Modes::ServiceSet},
      {"apps", "controllerrevisions", {"get", "list", "create", "patch", "delete"}, false, Modes::All},  // the history
      {"rbac.authorization.k8s.io", "roles", {"get", "list", "create", "patch", "delete"}, false, Modes::All},
      {"rbac.authorization.k8s.io", "rolebindings", {"get", "list", "create", "patch", "delete"}, false, Modes::All},
      {"coordination.k8s.io", "leases", {"get", "create", "update", "patch", "delete"}, false, Modes::All},
      {"mindcluster.huawei.com",
       "inferservicesets",
       {"get", "list", "watch", "create", "patch", "delete"},
       false,
       Modes::ServiceSet},
      {"mindcluster.huawei.com", "instancesets", {"get", "list", "watch", "patch"}, false, Modes::ServiceSet},
      {"mindcluster.huawei.com", "inferservices", {"get", "list", "watch"}, false, Modes::ServiceSet},
      {"scheduling.volcano.sh", "podgroups", {"list", "delete"}, false, Modes::ServiceSet},
      {"rbac.authorization.k8s.io", "clusterroles", {"get", "list", "create", "patch", "delete"}, true, Modes::All},
      {"rbac.authorization.k8s.io",
       "clusterrolebindings",
       {"get", "list", "create", "patch", "delete"},
       true,
       Modes::All},
      {"", "nodes", {"get", "list", "watch"}, true, Modes::All},
      {"", "pods", {"list"}, true, Modes::All},
      {"", "services", {"list"}, true, Modes::All},
  };
  return rights;
}

bool needed(Modes modes, const Target& target) {
  if (modes == Modes::All) return true;
  const bool service_set = !target.config || target.config->deploy_mode == config::DeployMode::InferServiceSet;
  return (modes == Modes::ServiceSet) == service_set;
}

std::string resource_name(const char* group, const char* resource) {
  return std::string(resource) + (*group ? std::string(".") + group : std::string());
}

bool allowed(kube::Client& client, const std::string& ns, const Right& r, const char* verb) {
  json::object attributes{{"verb", verb}, {"group", r.group}, {"resource", r.resource}};
  if (!r.cluster_wide) attributes["namespace"] = ns;
  const json::object review{{"apiVersion", "authorization.k8s.io/v1"},
                            {"kind", "SelfSubjectAccessReview"},
                            {"spec", {{"resourceAttributes", attributes}}}};
  const json::object answer = client.create(kAccessReviews, review);
  const json::value* status = answer.if_contains("status");
  const json::value* ok = status && status->is_object() ? status->get_object().if_contains("allowed") : nullptr;
  return ok && ok->is_bool() && ok->get_bool();
}

}  // namespace

Check rights(kube::Client& client, const Target& target) {
  std::vector<std::string> denied;
  std::size_t asked = 0;
  for (const auto& r : deploy_rights()) {
    if (!needed(r.modes, target) || (!r.cluster_wide && target.ns.empty())) continue;
    std::vector<std::string> verbs;
    for (const char* verb : r.verbs) {
      ++asked;
      if (!allowed(client, target.ns, r, verb)) verbs.push_back(verb);
    }
    if (!verbs.empty())
      denied.push_back(util::join(verbs, ",") + " " + resource_name(r.group, r.resource) +
                       (r.cluster_wide ? " (cluster-wide)" : ""));
  }
  const std::string scope = target.ns.empty() ? "cluster-wide rights only (pass -n NS for the namespace's)"
                                              : "in namespace " + target.ns + " and cluster-wide";
  if (denied.empty())
    return {"rbac", State::Ok, "all " + std::to_string(asked) + " rights a deploy needs, " + scope, ""};
  return {"rbac", State::Failed, "missing " + util::join(denied, "; ") + " (" + scope + ")",
          "ask an administrator to bind the Role and ClusterRole that kubectl mindie doctor --print-rbac prints"};
}

boost::json::object rbac_manifest(const std::string& ns) {
  json::array role_rules, cluster_rules;
  for (const auto& r : deploy_rights()) {
    json::array verbs;
    for (const char* v : r.verbs) verbs.emplace_back(v);
    json::object rule{{"apiGroups", json::array{r.group}}, {"resources", json::array{r.resource}}, {"verbs", verbs}};
    (r.cluster_wide ? cluster_rules : role_rules).emplace_back(std::move(rule));
  }
  const std::string name = "kubectl-mindie-deployer";
  json::object role{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                    {"kind", "Role"},
                    {"metadata", {{"name", name}, {"namespace", ns}}},
                    {"rules", std::move(role_rules)}};
  json::object cluster_role{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                            {"kind", "ClusterRole"},
                            {"metadata", {{"name", name}}},
                            {"rules", std::move(cluster_rules)}};
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array{std::move(role), std::move(cluster_role)}}};
}

}  // namespace mindie::cmd::doctor
