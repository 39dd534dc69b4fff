#include "cmd/multi_deployment.h"

#include <algorithm>
#include <tuple>

#include "mindie/render.h"
#include "mindie/rollout.h"
#include "util/strings.h"

namespace mindie::cmd {

namespace json = boost::json;

std::string multi_selector(const std::string& workload) {
  return std::string(render::kManagedByLabel) + "=" + render::kFieldManager + "," + render::kInstanceLabel + "=" +
         workload;
}

std::vector<std::string> list_workload_object_names(kube::Client& client, const kube::GVR& r, const std::string& ns,
                                                    const std::string& workload) {
  json::object list = client.list(r, ns, multi_selector(workload));
  std::vector<std::string> out;
  if (const auto* items = list.if_contains("items"); items && items->is_array())
    for (const auto& item : items->as_array()) {
      const auto* md = item.is_object() ? item.as_object().if_contains("metadata") : nullptr;
      const auto* n = md && md->is_object() ? md->as_object().if_contains("name") : nullptr;
      if (n && n->is_string()) out.emplace_back(n->as_string());
    }
  std::sort(out.begin(), out.end());
  return out;
}

void warn_rolled_deployments(kube::Client& client, Printer& printer, const std::string& ns, const std::string& workload,
                             const std::vector<json::object>& rendered) {
  json::object list;
  try {
    list = client.list(kube::gvr::kDeployments, ns, multi_selector(workload));
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    printer.warning("cannot list deployments in namespace " + ns + " (" + e.status_message() +
                    "): which running instances this deploy rolls to a new pod template is unknown");
    return;
  }
  const auto* items = list.if_contains("items");
  if (!items || !items->is_array()) return;
  for (const auto& [role, rolled] : rollout::rolled_by(rendered, items->as_array())) {
    const bool one = rolled.size() == 1;
    // No strategy is rendered, so Kubernetes' default applies: RollingUpdate, maxSurge 25% (at least one pod).
    printer.warning("role " + role + ": this deploy changes the pod template of " + std::to_string(rolled.size()) +
                    " running instance" + (one ? "" : "s") + " (" + util::join(rolled, ", ") +
                    "): the deployment controller rolls " + (one ? "its" : "their") +
                    " pods to it, starting each new pod before it stops an old one (maxSurge 25%), so the role needs "
                    "room for one more pod; until then kubectl mindie status and wait count " +
                    (one ? "it" : "them") +
                    " as on an earlier template; follow it with kubectl mindie rollout status -n " + ns);
  }
}

std::vector<WorkloadDeployment> list_workload_deployments(kube::Client& client, const std::string& ns,
                                                          const std::string& workload, bool engines_only) {
  std::string selector = multi_selector(workload);
  if (engines_only) {
    selector += "," + std::string(render::kComponentLabel) + " in (" + util::join(render::kInstanceEngineRoles, ",") +
                ")";
  }
  json::object list = client.list(kube::gvr::kDeployments, ns, selector);
  std::vector<WorkloadDeployment> out;
  if (const auto* items = list.if_contains("items"); items && items->is_array()) {
    for (const auto& item : items->as_array()) {
      const auto* md = item.is_object() ? item.as_object().if_contains("metadata") : nullptr;
      if (!md || !md->is_object()) continue;
      WorkloadDeployment d;
      if (const auto* n = md->as_object().if_contains("name"); n && n->is_string()) d.name = n->as_string();
      if (const auto* u = md->as_object().if_contains("uid"); u && u->is_string()) d.uid = u->as_string();
      if (const auto* l = md->as_object().if_contains("labels"); l && l->is_object()) {
        const auto& labels = l->as_object();
        if (const auto* v = labels.if_contains(render::kComponentLabel); v && v->is_string()) d.role = v->as_string();
        if (const auto* v = labels.if_contains(render::kInstanceIndexLabel); v && v->is_string()) {
          const std::string s(v->as_string());
          if (!s.empty() && s.size() < 4 && std::all_of(s.begin(), s.end(), ::isdigit)) d.index = std::stoi(s);
        }
      }
      out.push_back(std::move(d));
    }
  }
  std::sort(out.begin(), out.end(), [](const WorkloadDeployment& a, const WorkloadDeployment& b) {
    return std::tie(a.role, a.index, a.name) < std::tie(b.role, b.index, b.name);
  });
  return out;
}

std::vector<StaleObject> stale_workload_objects(kube::Client& client, const std::string& ns,
                                                const std::string& workload,
                                                const std::set<std::pair<std::string, std::string>>& wanted) {
  std::vector<StaleObject> stale;
  auto deployments = list_workload_deployments(client, ns, workload, false);
  std::reverse(deployments.begin(), deployments.end());  // highest index first
  std::stable_partition(deployments.begin(), deployments.end(),
                        [](const WorkloadDeployment& d) { return render::is_instance_engine_role(d.role); });
  for (const auto& d : deployments)
    if (!wanted.count({kube::gvr::kDeployments.resource, d.name})) stale.push_back({&kube::gvr::kDeployments, d.name});
  for (const auto& name : list_workload_object_names(client, kube::gvr::kServices, ns, workload))
    if (!wanted.count({kube::gvr::kServices.resource, name})) stale.push_back({&kube::gvr::kServices, name});
  return stale;
}

std::vector<std::string> foreign_renamed_services(kube::Client& client, const std::string& ns,
                                                  const std::string& workload,
                                                  const std::vector<render::RenamedService>& renamed) {
  std::vector<std::string> out;
  for (const auto& [name, replacement] : renamed) {
    const auto svc = client.get_if_exists(kube::gvr::kServices, ns, name);
    if (!svc) continue;
    const auto label = [&](const char* key) -> std::string {
      const auto* md = svc->if_contains("metadata");
      const auto* labels = md && md->is_object() ? md->as_object().if_contains("labels") : nullptr;
      const auto* v = labels && labels->is_object() ? labels->as_object().if_contains(key) : nullptr;
      return v && v->is_string() ? std::string(v->as_string()) : std::string();
    };
    if (label(render::kManagedByLabel) == render::kFieldManager && label(render::kInstanceLabel) == workload)
      continue;  // ours: stale_workload_objects lists it
    out.push_back("service/" + name + " in namespace " + ns + " is not this deployment's (no labels " +
                  multi_selector(workload) + "), so deploy left it; PyMotor 7d15c04 replaced it by service/" +
                  replacement + ": if nothing uses it, kubectl delete service -n " + ns + " " + name);
  }
  return out;
}

}  // namespace mindie::cmd
