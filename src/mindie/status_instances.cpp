// build_report's instance health: each instance's pods, whether it is healthy, and why not.
#include "kube/pod_state.h"
#include "mindie/status_internal.h"
#include "util/json_path.h"

namespace mindie::status::detail {

namespace json = boost::json;

namespace {

using util::find;
using util::num;
using util::str;

/// NPUs a pod asks for: the sum over its containers of every huawei.com/ resource (the Ascend device plugin's
/// resource names), from limits (extended resources must have requests = limits).
std::int64_t pod_npus(const json::value& pod) {
  std::int64_t n = 0;
  if (const auto* cs = find(&pod, {"spec", "containers"}); cs && cs->is_array()) {
    for (const auto& c : cs->as_array()) {
      const auto* limits = find(&c, {"resources", "limits"});
      if (!limits || !limits->is_object()) continue;
      for (const auto& [k, v] : limits->as_object()) {
        if (!k.starts_with("huawei.com/")) continue;
        if (v.is_string()) {
          try {
            n += std::stoll(std::string(v.as_string()));
          } catch (const std::exception&) {  // a quantity we cannot read counts as none
          }
        } else {
          n += num(&v);
        }
      }
    }
  }
  return n;
}

/// Reads the pods of `inst` (counting ready and terminating ones, restarts into `role`), noting images the spec
/// does not name in `tally`.
void read_pods(const Context& ctx, const LiveRole& lr, const std::vector<const json::value*>& pod_list, Instance& inst,
               Role& role, RoleTally& tally) {
  for (const auto* p : pod_list) {
    if (const auto* cs = find(p, {"spec", "containers"}); cs && cs->is_array() && !lr.spec_images.empty())
      for (const auto& c : cs->as_array()) {
        const auto it = lr.spec_images.find(str(find(&c, {"name"})));
        const std::string image = str(find(&c, {"image"}));
        if (it != lr.spec_images.end() && !image.empty() && image != it->second) tally.other_images.insert(image);
      }
    Pod pod{kube::read_pod_state(*p, ctx.now), pod_npus(*p), "", {}};
    pod.reason = pod.state.reason;
    // A pod being deleted is going, whatever its Ready condition still says.
    inst.terminating_pods += pod.state.terminating ? 1 : 0;
    inst.ready_pods += pod.state.ready && !pod.state.terminating ? 1 : 0;
    role.restarts += pod.state.restarts;
    inst.pods.push_back(std::move(pod));
  }
}

/// The unready lines of the pods of `inst` that are not ready (with their latest events), and the standby reason of
/// a healthy master/standby pair.
void pod_lines(const Context& ctx, const LiveRole& lr, Instance& inst) {
  for (auto& pod : inst.pods) {
    if (pod.state.ready && !pod.state.terminating) continue;
    // A removed instance's pods going away are what a scale-in looks like: its one line in instance_lines says so.
    if (!inst.wanted && pod.state.terminating) continue;
    // The standby of a healthy pair is not ready by design: not a problem to report.
    if (lr.master_standby && inst.healthy && pod.reason.starts_with("running, but not ready")) {
      pod.reason = "standby (only the master passes readiness)";
      continue;
    }
    pod.events = warning_events(ctx.in.events, "Pod", pod.state.name, 3);
    if (told_by_rollout(inst, pod)) continue;
    std::string line = "pod " + pod.state.name + " (role " + lr.name + ", instance " + std::to_string(inst.index) +
                       "): " + pod.reason;
    // The latest event says the most; the rest are in the report. An event that repeats the reason (the
    // scheduler's FailedScheduling and the PodScheduled condition carry one message) is not said twice.
    if (!pod.events.empty() && pod.reason.find(pod.events.front().message) == std::string::npos)
      line += "; event " + pod.events.front().reason + ": " + pod.events.front().message;
    ctx.report.unready.push_back(line);
  }
}

/// The unready lines of instance `inst` as a whole: pods missing, pods of a removed instance left.
void instance_lines(const Context& ctx, const LiveRole& lr, const Instance& inst, std::int64_t inst_pods,
                    std::int64_t present, RoleTally& tally) {
  const std::string prefix = "role " + lr.name + " instance " + std::to_string(inst.index) + ": ";
  const std::int64_t staying = present - inst.terminating_pods;
  if (inst.wanted && staying < inst_pods && !(lr.master_standby && inst.healthy)) {
    tally.operator_missed = true;
    ctx.report.unready.push_back(
        prefix + std::to_string(staying) + " of " + std::to_string(inst_pods) + " pods exist" +
        (inst.terminating_pods ? " (+" + std::to_string(inst.terminating_pods) + " terminating)" : std::string()));
  }
  if (!inst.wanted && present > 0) {
    tally.healthy = false;
    ctx.report.unready.push_back(prefix + std::to_string(present) + " pods of a removed instance still exist");
  }
}

/// Judges instance `key` of role `lr` with pods `pod_list` into role.instances.
void judge_instance(const Context& ctx, const Grouped& grouped, const LiveRole& lr, const InstanceKey& key,
                    const std::vector<const json::value*>& pod_list, Role& role, RoleTally& tally) {
  const auto [service, k] = key;
  static const std::map<std::int64_t, const json::value*> kNone;
  const auto deployments = grouped.deployments.find(lr.name);
  const auto& role_deployments = deployments == grouped.deployments.end() ? kNone : deployments->second;
  Instance inst;
  inst.index = k;
  inst.infer_service = ctx.multi ? std::string() : ctx.iss_name + "-" + std::to_string(service);
  inst.wanted = ctx.multi ? role_deployments.count(k) > 0
                          : k >= 0 && lr.wanted_of.count(service) && k < lr.wanted_of.at(service);
  // An instance's pods are what its workload asks for: the operator never updates a workload, so one made before
  // a change of pods per instance keeps its count (reported as an earlier template, not as missing pods).
  const json::value* workload = nullptr;
  if (ctx.multi) {
    if (const auto it = role_deployments.find(k); it != role_deployments.end()) workload = it->second;
  } else if (const auto w = grouped.workloads.find(lr.name); w != grouped.workloads.end()) {
    if (const auto it = w->second.find(key); it != w->second.end()) workload = it->second;
  }
  const std::int64_t inst_pods = workload ? num(find(workload, {"spec", "replicas"}), lr.pods_per_instance)
                                          : lr.pods_per_instance;
  read_pods(ctx, lr, pod_list, inst, role, tally);
  const std::int64_t inst_needed_ready = lr.master_standby ? lr.needed_ready : inst_pods;
  const auto present = static_cast<std::int64_t>(pod_list.size());
  const std::int64_t staying = present - inst.terminating_pods;
  inst.healthy = inst.wanted && inst.ready_pods >= inst_needed_ready && inst.terminating_pods == 0 &&
                 staying >= (lr.master_standby ? 1 : inst_pods);
  if (lr.gang && inst.wanted) judge_rebuild(ctx, lr, inst, workload);
  judge_current(ctx, lr, workload, inst, role, tally);
  pod_lines(ctx, lr, inst);
  instance_lines(ctx, lr, inst, inst_pods, present, tally);
  if (inst.wanted) {
    if (inst.healthy) ++role.ready_instances;
    else tally.healthy = false;
  }
  role.ready_pods += inst.ready_pods;
  role.pods += present;
  role.terminating_pods += inst.terminating_pods;
  // multi_deployment: the instance's Deployment (none: pods of a Deployment that is gone).
  if (ctx.multi && inst.wanted) inst.deployment = str(find(workload, {"metadata", "name"}));
  role.instances.push_back(std::move(inst));
}

}  // namespace

RoleTally judge_instances(const Context& ctx, Grouped& grouped, LiveRole& lr, Role& role) {
  RoleTally tally;
  // A role absent from the live set is healthy only when the baseline has none of it either (union without
  // PD-hybrid, mf-store without sglang).
  tally.healthy = ctx.multi || lr.spec >= 0 || !ctx.in.service_set || lr.base == 0;
  for (const auto& [key, pod_list] : grouped.pods[lr.name])
    judge_instance(ctx, grouped, lr, key, pod_list, role, tally);
  return tally;
}

}  // namespace mindie::status::detail
