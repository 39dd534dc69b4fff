#include "mindie/rollout_plan.h"

#include <algorithm>

#include "mindie/config.h"
#include "mindie/operator_rules.h"

namespace mindie::rollout {

namespace {

bool asked_for(const RestartRequest& req, const std::string& role) {
  return req.roles.empty() || std::find(req.roles.begin(), req.roles.end(), role) != req.roles.end();
}

const status::Role* find_role(const status::Report& report, const std::string& role) {
  for (const auto& r : report.roles)
    if (r.name == role) return &r;
  return nullptr;
}

/// The instances of `r` to replace: wanted, with a workload, not current (or any with `all`), not done yet.
RoleRestart pick_instances(const status::Role& r, const RestartRequest& req) {
  RoleRestart out;
  out.role = r.name;
  for (const auto& inst : r.instances) {
    if (!inst.wanted) continue;
    ++out.instances;
    if (inst.workload.empty() || !(req.all || inst.current == false)) continue;
    if (std::find(req.done.begin(), req.done.end(), inst.workload) != req.done.end()) continue;
    out.indexes.push_back(inst.index);
    out.workloads.push_back(inst.workload);
  }
  return out;
}

/// How role `rr` stays available (keep_ready, surge), or why it cannot ("" when it can).
std::string availability(const status::Report& report, const status::Role& r, const RestartRequest& req,
                         RoleRestart& rr) {
  const bool service_set = report.deploy_mode == config::to_string(config::DeployMode::InferServiceSet);
  rr.keep_ready = req.allow_downtime ? 0 : std::max<std::int64_t>(1, rr.instances - req.max_unavailable);
  if (!service_set && req.surge) {
    // The Deployment surges a pod of its own (its maxSurge) and keeps the old one until the new one is ready; on a
    // full NPU pool that pod never runs.
    rr.keep_ready = std::min(rr.keep_ready, rr.instances - 1);
    if (r.rollout_unschedulable.empty()) return "";
    return "the surge pods of its rollout find no room (" + r.rollout_unschedulable.front() +
           "): pass --no-surge (with --allow-downtime for a role of one instance) to replace pods in place";
  }
  if (rr.instances - 1 >= rr.keep_ready) return "";
  // Replacing one would leave too few ready: a temporary instance first.
  if (service_set && req.surge && !r.hpa_owned) {
    rr.surge = true;
    return "";
  }
  std::string why = "it runs " + std::to_string(rr.instances) + (rr.instances == 1 ? " instance" : " instances") +
                    ": replacing one leaves fewer than " + std::to_string(rr.keep_ready) + " ready";
  if (!req.surge) why += " (--no-surge)";
  else why += " (its instance count is its HPA's: no temporary instance can be added)";
  return why + "; pass --no-surge --allow-downtime to roll it anyway";
}

}  // namespace

RestartPlan plan_restart(const status::Report& report, const RestartRequest& req) {
  RestartPlan plan;
  for (const auto& name : req.roles)
    if (!find_role(report, name) || find_role(report, name)->unused())
      plan.refusals.push_back("role " + name + ": the deployment has no such role");
  const bool service_set = report.deploy_mode == config::to_string(config::DeployMode::InferServiceSet);
  for (const auto& r : report.roles) {
    if (r.unused() || !asked_for(req, r.name)) continue;
    RoleRestart rr = pick_instances(r, req);
    if (rr.indexes.empty()) continue;
    if (service_set && r.gang && !req.stop_operator) {
      plan.refusals.push_back(
          "role " + r.name +
          ": its instances are gang-scheduled, and infer-operator rebuilds a gang instance whose pods are deleted "
          "while it runs in a loop (its rescheduler records a fault for each deleted pod and deletes the new "
          "workload for it); pass --stop-operator to stop infer-operator (in every namespace) while each old "
          "instance's pods go and start it again to make the new one, or " +
          operator_rules::gang_ways_out(report.ns, r.name, 0));
      continue;
    }
    rr.gang = service_set && r.gang;
    if (const std::string why = availability(report, r, req, rr); !why.empty()) {
      plan.refusals.push_back("role " + r.name + ": " + why);
      continue;
    }
    plan.roles.push_back(std::move(rr));
  }
  return plan;
}

bool replaced(const status::Report& report, const std::string& role, std::int64_t index,
              const std::string& replaced_uid) {
  const status::Role* r = find_role(report, role);
  if (r == nullptr) return false;
  for (const auto& inst : r->instances)
    if (inst.wanted && inst.index == index)
      return inst.current == true && inst.healthy && (replaced_uid.empty() || inst.workload_uid != replaced_uid);
  return false;
}

std::int64_t ready_instances(const status::Report& report, const std::string& role, std::int64_t except) {
  const status::Role* r = find_role(report, role);
  if (r == nullptr) return 0;
  // Serving, on whichever template: every pod of it ready (a master/standby instance: one), none going.
  return std::count_if(r->instances.begin(), r->instances.end(), [&](const status::Instance& inst) {
    const auto needed = r->master_standby ? 1 : static_cast<std::int64_t>(inst.pods.size());
    return inst.wanted && inst.index != except && inst.ready_pods > 0 && inst.terminating_pods == 0 &&
           inst.ready_pods >= needed;
  });
}

}  // namespace mindie::rollout
