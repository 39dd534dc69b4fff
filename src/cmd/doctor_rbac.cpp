// doctor's rights (cmd/doctor_checks.h: rights, rbac_manifest): what a deploying user needs (cmd/rights.h's table),
// asked of the server, and the Role and ClusterRole --print-rbac prints from that table.
#include <algorithm>
#include <boost/json.hpp>

#include "cmd/doctor_checks.h"
#include "cmd/rights.h"
#include "kube/access_review.h"
#include "mindie/operator_rules.h"

namespace mindie::cmd::doctor {

namespace json = boost::json;

Check rights(kube::Client& client, const Target& target) {
  std::optional<bool> service_set;  // without a config, every mode's rights
  if (target.config) service_set = target.config->deploy_mode == config::DeployMode::InferServiceSet;
  const auto asked = rights::needed(0, service_set, target.ns);
  const auto denied = kube::denied(client, asked);
  const std::string scope = target.ns.empty() ? "cluster-wide rights only (pass -n NS for the namespace's)"
                                              : "in namespace " + target.ns + " and cluster-wide";
  if (denied.empty())
    return {"rbac", State::Ok, "all " + std::to_string(asked.size()) + " rights a deploy needs, " + scope, ""};
  return {"rbac", State::Failed, "missing " + rights::describe(denied) + " (" + scope + ")",
          "ask an administrator to bind the Role and ClusterRole that kubectl mindie doctor --print-rbac prints"};
}

Check stop_operator_rights(kube::Client& client) {
  const std::string where = std::string("in namespace ") + operator_rules::kOperatorNamespace;
  const auto denied = kube::denied(client, rights::stop_operator_rights());
  if (denied.empty())
    return {"rbac/stop-operator", State::Ok,
            "rollout restart --stop-operator may stop and start infer-operator (" + where + ")", ""};
  // Only gang-scheduled roles' rollouts need it: a warning.
  return {"rbac/stop-operator", State::Warning,
          "missing " + rights::describe(denied) + " " + where +
              ": rollout restart --stop-operator (gang-scheduled roles) cannot run",
          "ask an administrator for them, or for the rollout of gang roles"};
}

boost::json::object rbac_manifest(const std::string& ns) {
  json::array role_rules, cluster_rules;
  for (const auto& r : rights::table()) {
    json::array& rules = r.cluster_wide ? cluster_rules : role_rules;
    const json::array group{r.group}, resource{r.resource};
    // The table's rows of one resource, one after another, make one rule.
    if (rules.empty() || rules.back().at("apiGroups") != group || rules.back().at("resources") != resource)
      rules.emplace_back(json::object{{"apiGroups", group}, {"resources", resource}, {"verbs", json::array{}}});
    json::array& verbs = rules.back().as_object()["verbs"].as_array();
    for (const char* v : r.verbs)
      if (std::find(verbs.begin(), verbs.end(), json::value(v)) == verbs.end()) verbs.emplace_back(v);
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
