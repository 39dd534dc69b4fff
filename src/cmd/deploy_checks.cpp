#include "cmd/deploy_checks.h"

#include <algorithm>
#include <map>

#include "cmd/deploy.h"
#include "cmd/deploy_steps.h"
#include "cmd/gang_instances.h"
#include "cmd/multi_deployment.h"
#include "cmd/node_port_claims.h"
#include "cmd/pod_groups.h"
#include "mindie/baseline_policy.h"
#include "mindie/deployer_scripts.h"
#include "mindie/operator_rules.h"
#include "util/json_diff.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// Listing Services cluster-wide was forbidden (`e`): the ports go unchecked, said with the keys that move them.
void warn_node_ports_unchecked(Printer& printer, const std::vector<render::NodePortClaim>& claims,
                               const kube::ApiError& e) {
  std::string ports, keys;
  for (const auto& c : claims) {
    ports += (ports.empty() ? "" : ", ") + std::to_string(c.port);
    keys += (keys.empty() ? "" : ", ") + c.key;
  }
  printer.warning("cannot check that nodePort" + std::string(claims.size() > 1 ? "s " : " ") + ports +
                  (claims.size() > 1 ? " are" : " is") +
                  " free: listing Services in all namespaces is "
                  "forbidden (" +
                  e.status_message() +
                  "); a port another Service holds keeps the role from "
                  "starting (set " +
                  keys + " to choose another)");
}

/// The refusal naming each Service that holds a port the deployment needs, and a free port for each (of the Services
/// `services`, the claims and the deployment's own `claims`).
std::string node_port_conflicts_message(kube::Client& client,
                                        const std::vector<operator_rules::NodePortConflict>& conflicts,
                                        const std::vector<render::NodePortClaim>& claims, const json::array& services) {
  std::string msg;
  std::vector<render::NodePortClaim> refused;
  for (const auto& c : conflicts) {
    msg += (msg.empty() ? "" : "\n") + std::string("nodePort ") + std::to_string(c.claim.port) + " of service/" +
           c.claim.service + " in namespace " + c.claim.ns + " is already allocated to service/" + c.holder_name +
           " in namespace " + c.holder_ns + " (" + c.claim.key + ")";
    refused.push_back(c.claim);
  }
  return msg + "\n" + free_port_advice(client, refused, claims, &services) + "; nothing was written";
}

/// A list in namespace `ns` forbidden to a user who may still deploy: nullopt, with a warning that `check` is skipped.
std::optional<json::object> list_or_warn(kube::Client& client, Printer& printer, const kube::GVR& r,
                                         const std::string& ns, const std::string& selector, const std::string& check) {
  try {
    return client.list(r, ns, selector);
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    printer.warning("cannot list " + r.resource + " in namespace " + ns + " (" + e.status_message() + "): " + check);
    return std::nullopt;
  }
}

/// Gang roles whose live InstanceSet (among `sets`) has another instance count than `cfg` renders.
GangChanges gang_changes(const config::UserConfig& cfg, const json::object& iss, const json::array& sets) {
  GangChanges out;
  for (const auto& [role, wanted] : render::desired_role_replicas(cfg)) {
    if (!operator_rules::is_gang_role(iss, role)) continue;
    for (const auto& s : sets) {
      if (util::str(util::find(&s, {"metadata", "labels", "infer.huawei.com/instanceset-name"})) != role) continue;
      const std::int64_t live = util::num(util::find(&s, {"spec", "replicas"}));
      if (live > wanted) out.scale_in[role] = wanted;
      if (live != wanted) out.changes.push_back({role, 0, live, wanted, true});
    }
  }
  return out;
}

/// Refuses a change of what the live InstanceSets fixed at creation (infer-operator's inferservice_controller.go
/// newInstanceSet).
void refuse_fixed_at_creation(const std::string& ns, const json::object& iss, const json::array& sets) {
  const auto fixed = operator_rules::fixed_at_creation_changes(iss, sets);
  if (fixed.empty()) return;
  std::string msg;
  for (const auto& f : fixed)
    msg += (msg.empty() ? "" : "\n") + std::string("role ") + f.role + ": this deploy changes " + f.what + " from \"" +
           f.live + "\" to \"" + f.wanted + "\", but infer-operator fixes instanceset/" + f.instance_set +
           "'s labels and annotations when it creates it: its new instances would keep \"" + f.live + "\"";
  throw CommandError(msg + "\ndelete the deployment (kubectl mindie delete -n " + ns +
                     ") and deploy again; nothing "
                     "was written");
}

/// How many running instances of each role keep an earlier pod template (the operator never updates them): role ->
/// count; empty, with a warning, when the workloads cannot be listed.
std::map<std::string, std::size_t> earlier_templates(kube::Client& client, Printer& printer, const std::string& ns,
                                                     const json::object& iss, const std::string& selector) {
  json::array workloads;
  for (const kube::GVR* r : {&kube::gvr::kStatefulSets, &kube::gvr::kDeployments}) {
    const auto listed = list_or_warn(client, printer, *r, ns, selector,
                                     "which running instances keep an earlier pod template is unknown");
    if (!listed) return {};
    append_with_kind(workloads, listed->at("items").as_array(), r->kind);
  }
  std::map<std::string, std::size_t> out;
  for (const auto& [role, old] : operator_rules::instances_on_other_templates(iss, workloads)) out[role] = old.size();
  return out;
}

}  // namespace

std::string earlier_templates_line(const std::map<std::string, std::size_t>& earlier, const std::string& ns) {
  std::size_t total = 0;
  std::string roles;
  for (const auto& [role, n] : earlier) {
    total += n;
    roles += (roles.empty() ? "" : ", ") + role + " " + std::to_string(n);
  }
  if (total == 0) return "";
  // infer-operator applies a role's pod template only to the instances it creates (it never updates a workload):
  // these keep theirs until rolled, which rollout restart does one instance at a time.
  return std::to_string(total) + (total == 1 ? " instance" : " instances") + " on an earlier pod template (" + roles +
         "): run \"kubectl mindie rollout restart -n " + ns + "\" to roll them";
}

std::vector<render::NodePortClaim> check_node_ports(kube::Client& client, Printer& printer,
                                                    const config::UserConfig& cfg, const render::RenderOptions& opts) {
  // One taken anywhere in the cluster stops the role for good (the operator creates Services first).
  const auto claims = render::node_port_claims(cfg, opts);
  if (claims.empty()) return {};
  std::optional<json::object> services;
  try {
    services = client.list(kube::gvr::kServices, "", "", 500);
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    warn_node_ports_unchecked(printer, claims, e);
    return claims;
  }
  const json::array& items = services->at("items").as_array();
  std::vector<render::NodePortClaim> to_check;
  for (const auto& c : claims) {
    // infer-operator never updates a role Service: a live one keeps its port whatever the config says now.
    const auto live = operator_rules::own_node_port(c, items);
    if (cfg.deploy_mode == config::DeployMode::InferServiceSet && live && *live != c.port) {
      const std::string port = std::to_string(*live);
      printer.warning("service/" + c.service + " keeps nodePort " + port + ", not " + std::to_string(c.port) +
                      ": infer-operator never updates a role Service; to move it, delete it (kubectl delete service "
                      "-n " +
                      cfg.job_id + " " + c.service + ") and deploy again, or set " + c.key + " to " + port);
      continue;
    }
    to_check.push_back(c);
  }
  const auto conflicts = operator_rules::node_port_conflicts(to_check, items);
  if (!conflicts.empty()) throw CommandError(node_port_conflicts_message(client, conflicts, claims, items));
  return to_check;
}

void check_gang_support(kube::Client& client, const json::object& iss) {
  const auto gang = operator_rules::gang_roles(iss);
  if (gang.empty() || client.has_group_version(kube::gvr::kPodGroups.group, kube::gvr::kPodGroups.version)) return;
  std::string roles;
  for (const auto& r : gang) roles += (roles.empty() ? "" : ", ") + r;
  const bool several = gang.size() > 1;
  throw CommandError("role" + std::string(several ? "s " : " ") + roles + (several ? " run" : " runs") +
                     " more than one pod per instance, so " + (several ? "they are" : "it is") +
                     " gang-scheduled, and infer-operator refuses " + (several ? "them" : "it") +
                     " unless Volcano's "
                     "PodGroup CRD (podgroups.scheduling.volcano.sh, " +
                     kube::gvr::kPodGroups.api_version() +
                     ") is established when the operator starts: the server does not serve it; install Volcano "
                     "(then restart infer-operator); nothing was written");
}

GangChanges check_live_instance_sets(kube::Client& client, Printer& printer, const config::UserConfig& cfg,
                                     const json::object& iss, const std::string& workload) {
  const std::string& ns = cfg.job_id;
  // What the operator fixed when it created the live InstanceSets (newInstanceSet), and the workloads it never updates.
  const std::string selector = "infer.huawei.com/inferservice-name=" + workload + "-0";
  const auto listed_sets = list_or_warn(client, printer, kube::gvr::kInstanceSets, ns, selector,
                                        "not checked whether this deploy changes what the live InstanceSets fixed at "
                                        "creation (infer-operator would not carry that out)");
  if (!listed_sets || listed_sets->at("items").as_array().empty()) return {};
  const json::array& sets = listed_sets->at("items").as_array();
  // Gang roles this deploy scales in: their removed instances' PodGroups go once everything is written
  // (podgroup_manager.go).
  GangChanges changes = gang_changes(cfg, iss, sets);
  refuse_gang_rebuild_loop(client, ns, iss, changes.changes, false);
  refuse_fixed_at_creation(ns, iss, sets);
  changes.earlier_templates = earlier_templates(client, printer, ns, iss, selector);
  return changes;
}

void check_served(kube::Client& client, const std::vector<json::object>& objects) {
  std::map<std::string, std::vector<const kube::GVR*>> by_group_version;
  for (const auto& obj : objects) {
    const kube::GVR& r = gvr_of(obj);
    if (r.group.empty() || r.group == "apps" || r.group == "rbac.authorization.k8s.io") continue;  // built in
    auto& list = by_group_version[r.api_version()];
    if (std::find(list.begin(), list.end(), &r) == list.end()) list.push_back(&r);
  }
  for (const auto& [group_version, resources] : by_group_version) {
    const kube::GVR& first = *resources.front();
    const auto served = client.served_resources(first.group, first.version);
    for (const kube::GVR* r : resources) {
      if (served && std::find(served->begin(), served->end(), r->resource) != served->end()) continue;
      const std::string what = r->resource + "." + r->group + " (" + r->kind + ", " + group_version + ")";
      const std::string fix = r->group == "mindcluster.huawei.com"
                                  ? "install MindCluster infer-operator and its CRDs first (kubectl get crd lists "
                                    "those installed)"
                                  : "install the CRD first";
      throw CommandError("the server does not serve " + what +
                         (served ? ", though it serves other resources of " + group_version : std::string()) + ": " +
                         fix + "; nothing was written");
    }
  }
}

std::string missing_scripts_message(const std::vector<std::string>& missing) {
  std::string names;
  for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
  return "the pods run " + names + " from configmap/" + baseline::kConfigMapName +
         ", which would not hold them: pass --scripts-dir DIR (the folder of PyMotor's deployer scripts)";
}

std::vector<render::NodePortClaim> DeployOptions::check_operator_rules(kube::Client& client, Printer& printer,
                                                                       bool redeploy) {
  std::vector<render::NodePortClaim> ports = check_node_ports(client, printer, *config_, render_options_);
  if (config_->deploy_mode != config::DeployMode::InferServiceSet) {
    if (redeploy)
      warn_rolled_deployments(client, printer, config_->job_id, render::workload_name(*config_, render_options_),
                              objects_);
    return ports;
  }
  const json::object& iss = objects_.back();
  check_gang_support(client, iss);
  if (!redeploy) return ports;
  GangChanges changes = check_live_instance_sets(client, printer, *config_, iss,
                                                 render::workload_name(*config_, render_options_));
  gang_scale_in_ = std::move(changes.scale_in);
  gang_changes_ = std::move(changes.changes);
  earlier_templates_ = std::move(changes.earlier_templates);
  return ports;
}

void DeployOptions::check_existing_baseline(const baseline::Baseline& existing, Printer& printer) const {
  const std::string& where = existing.where;
  const std::string mode = existing.deploy_mode();
  if (mode != config::to_string(config_->deploy_mode)) {
    throw CommandError("deploy_mode cannot change after deploy: the baseline in " + where + " has " + mode +
                       ", the config has " + std::string(config::to_string(config_->deploy_mode)) +
                       "; delete the deployment and deploy again");
  }
  const std::string& live_name = existing.recorded_workload;
  const std::string new_name = render::workload_name(*config_, render_options_);
  if (!live_name.empty() && live_name != new_name) {
    // Name what runs: an InferServiceSet, or (multi_deployment, single_container) the labelled Deployments.
    const std::string what = baseline::runs_deployments(mode) ? "the deployments of " : "InferServiceSet ";
    throw CommandError("the baseline in " + where + " belongs to " + what + live_name + ", not " + new_name +
                       ": pass --name " + live_name + " (renaming would leave the old service running)");
  }

  // A redeploy replaces the baseline whole (as re-applying deploy.py's files did): say what it changes, above
  // all instance counts that a scale had set.
  boost::system::error_code ec;
  const json::value old_doc = existing.raw ? json::parse(*existing.raw, ec) : json::value();
  if (!existing.raw || ec || !old_doc.is_object()) {
    printer.warning("the baseline in " + where + " is not valid JSON; deploy replaces it");
    return;
  }
  const auto changed = util::diff_paths(policy::comparable(old_doc), policy::comparable(config_->doc));
  if (changed.empty()) return;
  std::string msg = "deploy replaces the baseline in " + where + ", which differs at:";
  for (const auto& path : changed) msg += "\n  " + path;
  // PD-hybrid is the presence of hybrid_instances_num (config::parse_user_config).
  boost::system::error_code absent;
  const bool was_hybrid = old_doc.find_pointer("/motor_deploy_config/hybrid_instances_num", absent) != nullptr;
  if (was_hybrid != config_->hybrid()) {
    msg += std::string("\n  (the workload switches from ") + (was_hybrid ? "PD-hybrid" : "prefill/decode") + " to " +
           (config_->hybrid() ? "PD-hybrid" : "prefill/decode") + " instances)";
  } else {
    for (const auto& [path, role] :
         {std::pair{policy::kPrefillInstancesPath, "prefill"}, std::pair{policy::kDecodeInstancesPath, "decode"},
          std::pair{policy::kHybridInstancesPath, "union"}}) {
      if (std::find(changed.begin(), changed.end(), path) != changed.end())
        msg += std::string("\n  (") + role + " instances change: use kubectl mindie scale to change counts alone)";
    }
  }
  printer.warning(msg);
}

}  // namespace mindie::cmd
