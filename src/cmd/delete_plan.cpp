// What kubectl mindie delete removes; see delete_plan.h.
#include "cmd/delete_plan.h"

#include <set>
#include <utility>

#include "cmd/adopt.h"
#include "cmd/common.h"
#include "cmd/node_port_claims.h"
#include "cmd/status.h"
#include "kube/names.h"
#include "mindie/render.h"
#include "mindie/status_report.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

const std::string kRbacPrefix = "mindie-motor-controller-";  // render.cpp: "<service account>-<namespace>"
constexpr const char* kInstanceLabel = "app.kubernetes.io/instance";

const json::object* object_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

std::string label(const json::object& obj, const std::string& key) {
  const auto* md = object_at(obj, "metadata");
  const auto* labels = md ? object_at(*md, "labels") : nullptr;
  const json::value* v = labels ? labels->if_contains(key) : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

bool has_owner(const json::object& obj) {
  const auto* md = object_at(obj, "metadata");
  const json::value* refs = md ? md->if_contains("ownerReferences") : nullptr;
  return refs && refs->is_array() && !refs->as_array().empty();
}

std::string metadata_string(const json::object& obj, std::string_view key) {
  const auto* md = object_at(obj, "metadata");
  const json::value* v = md ? md->if_contains(key) : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string name_of(const json::object& obj) { return metadata_string(obj, "name"); }

// Items of a LIST; a collection the server does not serve (CRD not installed: 404) is empty.
json::array list_items(kube::Client& client, const kube::GVR& r, const std::string& ns, const std::string& selector) {
  try {
    json::object list = client.list(r, ns, selector);
    json::value* items = list.if_contains("items");
    return items && items->is_array() ? std::move(items->get_array()) : json::array();
  } catch (const kube::ApiError& e) {
    if (e.code() == 404) return {};
    throw;
  }
}

// Why a cluster-scoped RBAC object is not this deployment's own ("" = it is).
std::string foreign_rbac(const json::object& obj, const std::string& ns, const std::string& workload) {
  if (!managed_by_us(obj)) return "not labelled app.kubernetes.io/managed-by=kubectl-mindie";
  const std::string instance = label(obj, kInstanceLabel);
  if (!workload.empty() && instance != workload)
    return "its label " + std::string(kInstanceLabel) + " is \"" + instance + "\", not \"" + workload + "\"";
  if (const json::value* subjects = obj.if_contains("subjects"); subjects && subjects->is_array()) {
    for (const auto& s : subjects->as_array()) {
      const auto* so = s.is_object() ? &s.get_object() : nullptr;
      const json::value* sns = so ? so->if_contains("namespace") : nullptr;
      if (!sns || !sns->is_string() || sns->as_string() != ns) return "it binds subjects outside namespace " + ns;
    }
  }
  return "";
}

// The workload name and deploy mode motor-config records.
void read_record(DeletePlan& plan) {
  const std::string& ns = plan.ns;
  require_ours(*plan.config_map, ns, "delete", "nothing was deleted");
  // Written before the annotations existed: the baseline names them (a broken baseline leaves labels only).
  const baseline::Baseline stored = baseline::read_baseline(*plan.config_map, ns);
  plan.workload = stored.recorded_workload;
  plan.deploy_mode = stored.recorded_mode;
  if (stored.config) {
    if (plan.workload.empty()) plan.workload = render::default_service_set_name(*stored.config);
    if (plan.deploy_mode.empty()) plan.deploy_mode = std::string(config::to_string(stored.config->deploy_mode));
  }
  if (plan.workload.empty()) plan.workload = label(*plan.config_map, kInstanceLabel);
  // A hand-edited annotation must never reach a request path or a selector.
  if (!plan.workload.empty() && !kube::is_dns1123_label(plan.workload))
    throw CommandError("configmap/" + std::string(baseline::kConfigMapName) + " records workload name \"" +
                       plan.workload + "\", which is not a DNS-1123 label; nothing was deleted");
}

// Namespaced objects: by label (the namespace holds one deployment: its job_id), the recorded workload name
// narrowing `selector` when known. Owned objects (the operator's workloads, ReplicaSets) go with their owner.
// Returns the InferServiceSet's count of services (1 without one).
std::int64_t plan_namespaced(kube::Client& client, DeletePlan& plan, const std::string& selector) {
  const std::string& ns = plan.ns;
  std::set<std::pair<std::string, std::string>> seen;  // resource, name
  const auto add = [&](const kube::GVR& r, const json::object& obj) {
    if (seen.emplace(r.resource + "." + r.group, name_of(obj)).second)
      plan.targets.push_back({r, ns, name_of(obj), "", metadata_string(obj, "uid"), "", obj});
  };
  // The workload first: its deletion stops the operator from recreating what follows.
  std::int64_t services = 1;
  if (!plan.workload.empty()) {
    std::optional<json::object> iss;
    try {
      iss = client.get_if_exists(kube::gvr::kInferServiceSets, ns, plan.workload);
    } catch (const kube::ApiError& e) {
      if (e.code() != 404) throw;  // a 404 without the object's name: the CRD is not installed
    }
    if (iss && managed_by_us(*iss)) {
      add(kube::gvr::kInferServiceSets, *iss);
      services = status::service_count(iss);
    }
  }
  for (const kube::GVR* r : {&kube::gvr::kInferServiceSets, &kube::gvr::kDeployments, &kube::gvr::kServices,
                             &kube::gvr::kServiceAccounts, &kube::gvr::kRoleBindings, &kube::gvr::kRoles}) {
    for (auto& item : list_items(client, *r, ns, selector)) {
      auto& obj = item.as_object();
      if (!has_owner(obj)) {
        obj["kind"] = r->kind;  // a list answer leaves it out of its items
        obj["apiVersion"] = r->api_version();
        add(*r, obj);
      }
    }
  }
  return services;
}

}  // namespace

DeletePlan plan_delete(kube::Client& client, const std::string& ns) {
  DeletePlan plan;
  plan.ns = ns;
  plan.config_map = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (plan.config_map) read_record(plan);
  std::string selector = kManagedBySelector;
  if (!plan.workload.empty()) selector += "," + std::string(kInstanceLabel) + "=" + plan.workload;
  const std::int64_t services = plan_namespaced(client, plan, selector);

  // Cluster-scoped RBAC: deploy names it after the namespace; only this deployment's own is deleted.
  for (const kube::GVR* r : {&kube::gvr::kClusterRoleBindings, &kube::gvr::kClusterRoles}) {
    const std::string name = kRbacPrefix + ns;
    const auto obj = client.get_if_exists(*r, "", name);
    if (!obj) continue;
    const std::string why = foreign_rbac(*obj, ns, plan.workload);
    plan.targets.push_back(
        {*r, "", name, why, metadata_string(*obj, "uid"), metadata_string(*obj, "resourceVersion"), *obj});
  }
  // The nodePorts deploy claimed cluster-wide (cmd/node_port_claims.h), found by the namespace they name.
  for (auto& item : list_items(client, kube::gvr::kClusterRoles, "", std::string(kClaimedByLabel) + "=" + ns)) {
    auto& obj = item.as_object();
    obj["kind"] = kube::gvr::kClusterRoles.kind;  // a list answer leaves it out of its items
    obj["apiVersion"] = kube::gvr::kClusterRoles.api_version();
    plan.targets.push_back({kube::gvr::kClusterRoles, "", name_of(obj), "", metadata_string(obj, "uid"),
                            metadata_string(obj, "resourceVersion"), obj});
  }

  // What --wait waits for: the workload and its Deployments, and every pod of either.
  // multi_deployment and single_container have no InferServiceSet (and the cluster may not serve the CRD): their
  // Deployments and pods carry the labels of `selector`, below.
  if (!plan.workload.empty() && !baseline::runs_deployments(plan.deploy_mode)) {
    plan.gone.push_back({kube::gvr::kInferServiceSets, ns, "", "metadata.name=" + plan.workload});
    plan.gone.push_back({kube::gvr::kPods, ns, status::service_selector(plan.workload, services), ""});
  }
  plan.gone.push_back({kube::gvr::kDeployments, ns, selector, ""});
  plan.gone.push_back({kube::gvr::kPods, ns, selector, ""});
  return plan;
}

DeleteTarget DeletePlan::config_map_target() const {
  return {kube::gvr::kConfigMaps,
          ns,
          baseline::kConfigMapName,
          "",
          metadata_string(*config_map, "uid"),
          metadata_string(*config_map, "resourceVersion"),
          *config_map};
}

change::DeleteIntent DeletePlan::intent() const {
  change::DeleteIntent out{deploy_mode, workload, {}};
  for (const auto& t : targets)
    if (t.kept_reason.empty()) out.targets.push_back({t.gvr.api_version(), t.gvr.kind, t.ns, t.name});
  if (config_map) out.targets.push_back({"v1", "ConfigMap", ns, baseline::kConfigMapName});
  return out;
}

bool delete_took_effect(kube::Client& client, const DeleteTarget& t) {
  const auto live = client.get_if_exists(t.gvr, t.ns, t.name);
  const auto* md = live ? object_at(*live, "metadata") : nullptr;
  return md == nullptr || md->contains("deletionTimestamp") ||
         (!t.uid.empty() && metadata_string(*live, "uid") != t.uid);
}

std::vector<DeleteTarget> recorded_targets(kube::Client& client, const std::string& ns,
                                           const change::DeleteIntent& intent) {
  std::vector<DeleteTarget> targets;
  for (const auto& t : intent.targets) {
    const kube::GVR* r = kube::gvr::for_kind(t.api_version, t.kind);
    // Only this deployment's namespace (or cluster-scoped RBAC) and valid names reach a request path.
    if (r == nullptr || !kube::is_dns1123_subdomain(t.name) || (!t.ns.empty() && t.ns != ns)) continue;
    DeleteTarget target{*r, t.ns, t.name, "", "", "", {}};
    if (auto live = client.get_if_exists(*r, t.ns, t.name)) {
      target.uid = metadata_string(*live, "uid");
      // As plan_delete: a resourceVersion only where no controller rewrites the object's status.
      if (t.ns.empty() || r->resource == kube::gvr::kConfigMaps.resource)
        target.resource_version = metadata_string(*live, "resourceVersion");
      target.object = std::move(*live);
    }
    targets.push_back(std::move(target));
  }
  return targets;
}

}  // namespace mindie::cmd
