#include "cmd/deploy_prune.h"

#include <set>

#include "cmd/deploy_steps.h"

namespace mindie::cmd {

namespace json = boost::json;

bool Removals::removes_workloads() const {
  if (!instances.empty()) return true;
  for (const auto& o : objects)
    if (o.gvr == &kube::gvr::kDeployments) return true;
  return false;
}

std::string Removals::describe() const {
  std::string out;
  for (const auto& c : instances)
    out += "\n  role " + c.role + ": " + std::to_string(c.from) + " instance" + (c.from == 1 ? "" : "s") + " → " +
           std::to_string(c.to);
  for (const auto& o : objects)
    if (o.gvr == &kube::gvr::kDeployments) out += "\n  " + o.gvr->kind_dot_group() + "/" + o.name;
  return out;
}

Removals planned_removals(kube::Client& client, const config::UserConfig& cfg, const std::string& workload,
                          const std::vector<json::object>& objects) {
  Removals r;
  if (cfg.deploy_mode == config::DeployMode::InferServiceSet) {
    const json::object& iss = objects.back();  // render: the InferServiceSet comes last
    if (const auto live = client.get_if_exists(gvr_of(iss), cfg.job_id, object_name(iss)))
      r.instances = scale::instance_cuts(*live, render::desired_role_replicas(cfg));
    return r;
  }
  std::set<std::pair<std::string, std::string>> wanted;  // resource, name
  for (const auto& obj : objects) wanted.emplace(gvr_of(obj).resource, object_name(obj));
  r.objects = stale_workload_objects(client, cfg.job_id, workload, wanted);
  return r;
}

std::string removal_refusal(const Removals& r, const std::string& ns) {
  return "this deploy would remove running instances (its counts are below the live ones, or it no longer has "
         "what runs):" +
         r.describe() +
         "\nto keep them, set the counts in the config to the live ones (kubectl mindie diff shows them); to remove "
         "them, scale first (kubectl mindie scale -n " +
         ns + ") or confirm with --prune; nothing was written";
}

}  // namespace mindie::cmd
