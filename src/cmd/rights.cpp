#include "cmd/rights.h"

#include <algorithm>

#include "cmd/common.h"
#include "mindie/operator_rules.h"
#include "util/strings.h"

namespace mindie::cmd::rights {

namespace {

constexpr unsigned kNone = 0;

bool in_mode(Modes modes, std::optional<bool> service_set) {
  if (modes == Modes::All || !service_set) return true;
  return (modes == Modes::ServiceSet) == *service_set;
}

std::string resource_name(const std::string& group, const std::string& resource) {
  return resource + (group.empty() ? std::string() : "." + group);
}

}  // namespace

// What deploy, scale, update-config, status, wait and delete send (README "The controller's rights" covers what the
// controller's own ServiceAccount gets). A user who grants the controller's Role and ClusterRole must hold their
// rights too: RBAC refuses an escalation (kubernetes/kubernetes pkg/registry/rbac/escalation_check.go), so deploy
// checks them. A server-side apply that creates its object needs create besides patch
// (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go). Failing reads stop a command
// before it writes by themselves, and a refused revision is a warning: deploy and scale check only their writes.
const std::vector<Right>& table() {
  static const std::vector<Right> rights = {
      {"", "configmaps", {"get", "list", "watch"}, false, Modes::All, kDeploy},  // the controller's Role grants them
      {"", "configmaps", {"create"}, false, Modes::All, kDeploy},
      {"", "configmaps", {"patch"}, false, Modes::All, kDeploy | kScale},
      {"", "configmaps", {"delete"}, false, Modes::All, kNone},
      {"", "serviceaccounts", {"get", "list"}, false, Modes::All, kNone},
      {"", "serviceaccounts", {"create", "patch"}, false, Modes::All, kDeploy},
      {"", "serviceaccounts", {"delete"}, false, Modes::All, kNone},
      {"", "pods", {"get", "list", "watch"}, false, Modes::All, kDeploy},  // the controller's Role grants them
      {"", "events", {"list", "watch"}, false, Modes::All, kNone},
      {"", "services", {"get", "list", "watch"}, false, Modes::All, kNone},
      {"", "services", {"delete"}, false, Modes::All, kDeployPrune},
      {"", "services", {"create", "patch"}, false, Modes::Deployments, kDeploy},
      {"apps", "deployments", {"get", "list", "watch"}, false, Modes::All, kNone},
      {"apps", "deployments", {"delete"}, false, Modes::All, kDeployPrune},
      {"apps", "deployments", {"create", "patch"}, false, Modes::Deployments, kDeploy | kScale},
      {"apps", "deployments", {"delete"}, false, Modes::Deployments, kScale},
      {"apps", "statefulsets", {"list", "watch"}, false, Modes::ServiceSet, kNone},
      {"apps", "statefulsets", {"delete"}, false, Modes::ServiceSet, kNone},  // rollout restart's replacements
      {"apps", "controllerrevisions", {"get", "list", "create", "patch", "delete"}, false, Modes::All, kNone},
      {"rbac.authorization.k8s.io", "roles", {"get", "list"}, false, Modes::All, kNone},
      {"rbac.authorization.k8s.io", "roles", {"create", "patch"}, false, Modes::All, kDeploy},
      {"rbac.authorization.k8s.io", "roles", {"delete"}, false, Modes::All, kNone},
      {"rbac.authorization.k8s.io", "rolebindings", {"get", "list"}, false, Modes::All, kNone},
      {"rbac.authorization.k8s.io", "rolebindings", {"create", "patch"}, false, Modes::All, kDeploy},
      {"rbac.authorization.k8s.io", "rolebindings", {"delete"}, false, Modes::All, kNone},
      {"coordination.k8s.io", "leases", {"get", "create", "patch"}, false, Modes::All, kDeploy | kScale},  // the lock
      {"coordination.k8s.io", "leases", {"update", "delete"}, false, Modes::All, kNone},
      {"mindcluster.huawei.com", "inferservicesets", {"get", "list", "watch"}, false, Modes::ServiceSet, kNone},
      {"mindcluster.huawei.com", "inferservicesets", {"create"}, false, Modes::ServiceSet, kDeploy},
      {"mindcluster.huawei.com", "inferservicesets", {"patch"}, false, Modes::ServiceSet, kDeploy | kScale},
      {"mindcluster.huawei.com", "inferservicesets", {"delete"}, false, Modes::ServiceSet, kNone},
      {"mindcluster.huawei.com", "instancesets", {"get", "list", "watch", "patch"}, false, Modes::ServiceSet, kNone},
      {"mindcluster.huawei.com", "inferservices", {"get", "list", "watch"}, false, Modes::ServiceSet, kNone},
      {"scheduling.volcano.sh", "podgroups", {"get", "list", "delete"}, false, Modes::ServiceSet, kNone},
      {"rbac.authorization.k8s.io", "clusterroles", {"get", "list"}, true, Modes::All, kNone},
      {"rbac.authorization.k8s.io", "clusterroles", {"create", "patch"}, true, Modes::All, kDeploy},
      {"rbac.authorization.k8s.io", "clusterroles", {"delete"}, true, Modes::All, kNone},
      {"rbac.authorization.k8s.io", "clusterrolebindings", {"get", "list"}, true, Modes::All, kNone},
      {"rbac.authorization.k8s.io", "clusterrolebindings", {"create", "patch"}, true, Modes::All, kDeploy},
      {"rbac.authorization.k8s.io", "clusterrolebindings", {"delete"}, true, Modes::All, kNone},
      {"", "nodes", {"get", "list", "watch"}, true, Modes::All, kDeploy},  // the controller's ClusterRole grants them
      {"", "pods", {"list"}, true, Modes::All, kNone},
      {"", "services", {"list"}, true, Modes::All, kNone},
  };
  return rights;
}

std::vector<kube::ResourceAccess> needed(unsigned uses, std::optional<bool> service_set, const std::string& ns) {
  std::vector<kube::ResourceAccess> out;
  for (const auto& r : table()) {
    if ((uses != 0 && (r.checked_by & uses) == 0) || !in_mode(r.modes, service_set)) continue;
    if (!r.cluster_wide && ns.empty()) continue;
    for (const char* verb : r.verbs) {
      kube::ResourceAccess a{verb, r.group, r.resource, r.cluster_wide ? "" : ns};
      if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(std::move(a));
    }
  }
  return out;
}

std::vector<kube::ResourceAccess> stop_operator_rights() {
  const std::string ns = operator_rules::kOperatorNamespace;
  return {{"get", "apps", "deployments", ns},
          {"patch", "apps", "deployments", ns},
          {"list", "", "pods", ns},
          {"watch", "", "pods", ns}};
}

std::string describe(const std::vector<kube::ResourceAccess>& denied) {
  // Grouped per resource and scope, in the order first met.
  std::vector<std::pair<kube::ResourceAccess, std::vector<std::string>>> groups;
  for (const auto& a : denied) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.first.group == a.group && g.first.resource == a.resource && g.first.ns == a.ns;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), {a, {}});
    it->second.push_back(a.verb);
  }
  std::vector<std::string> parts;
  for (const auto& [a, verbs] : groups)
    parts.push_back(util::join(verbs, ",") + " " + resource_name(a.group, a.resource) +
                    (a.ns.empty() ? " (cluster-wide)" : ""));
  return util::join(parts, "; ");
}

std::vector<kube::ResourceAccess> storm_rights(const StormWrites& writes, const std::string& ns) {
  const std::string storm_group = "orchestration.aibrix.ai";
  std::vector<kube::ResourceAccess> out;
  if (writes.lease)
    for (const char* verb : {"get", "create", "patch"}) out.push_back({verb, "coordination.k8s.io", "leases", ns});
  if (writes.create) out.push_back({"create", storm_group, "stormservices", ns});
  out.push_back({"patch", storm_group, "stormservices", ns});
  for (const char* verb : {"create", "patch"}) out.push_back({verb, "", "services", ns});
  if (writes.prune) out.push_back({"delete", "", "services", ns});
  return out;
}

namespace {

void refuse_denied(const std::vector<kube::ResourceAccess>& denied, const std::string& ns, const std::string& command,
                   const std::string& remedy) {
  if (denied.empty()) return;
  throw CommandError(command + " needs rights your user does not have (in namespace " + ns +
                     ", or cluster-wide where said): " + describe(denied) + "; " + remedy + "; nothing was written");
}

}  // namespace

void check_before_write(kube::Client& client, const std::string& ns, unsigned uses, bool service_set,
                        const std::string& command) {
  refuse_denied(kube::denied(client, needed(uses, service_set, ns)), ns, command,
                "an administrator can bind the Role and ClusterRole that `kubectl mindie doctor --print-rbac -n " + ns +
                    "` prints");
}

void check_before_write(kube::Client& client, const std::string& ns, const std::vector<kube::ResourceAccess>& needed,
                        const std::string& command) {
  refuse_denied(kube::denied(client, needed), ns, command, "ask an administrator to grant them");
}

}  // namespace mindie::cmd::rights
