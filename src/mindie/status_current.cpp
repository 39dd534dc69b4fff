// build_report's current templates: whether each instance runs its role's current pod template, rolled out
// completely, and what the role says of those that do not.
#include <algorithm>

#include "mindie/operator_rules.h"
#include "mindie/rollout.h"
#include "mindie/status_internal.h"
#include "util/json_path.h"
#include "util/strings.h"

namespace mindie::status::detail {

namespace json = boost::json;

namespace {

using util::find;
using util::str;

/// Instance::rollout of an infer_service_set instance whose workload was made from an earlier role template.
constexpr const char* kEarlierTemplate = "its workload was made from an earlier pod template";

/// The scheduler's message of a pod that cannot be scheduled (pod_state's reason "unschedulable[: message]"), ""
/// for any other pod.
std::string unschedulable_message(const Pod& pod) {
  if (!pod.reason.starts_with("unschedulable")) return "";
  const auto colon = pod.reason.find(": ");
  return colon == std::string::npos ? "no message from the scheduler" : pod.reason.substr(colon + 2);
}

/// An instance whose workload is rolling out its template (not one made from an earlier template).
bool rolling(const Instance& inst) { return inst.current == false && inst.rollout != kEarlierTemplate; }

}  // namespace

void judge_current(const Context& ctx, const LiveRole& lr, const json::value* workload, Instance& inst, Role& role,
                   RoleTally& tally) {
  if (!workload) return;
  const std::string hash = operator_rules::workload_template_hash(*workload);
  if (!hash.empty()) inst.template_hash = hash;
  inst.workload = ctx.multi ? "deployment/" + str(find(workload, {"metadata", "name"}))
                            : operator_rules::workload_ref(*workload);
  inst.workload_uid = str(find(workload, {"metadata", "uid"}));
  if (!inst.wanted) return;
  // infer-operator copies the role's template into an instance's workload when it makes it and never updates it
  // (Ascend/mind-cluster component/infer-operator pkg/controller/workload/statefulset_handler.go,
  // deployment_handler.go); a Deployment of the other modes is the instance's template itself.
  const bool earlier = !ctx.multi && !lr.hash.empty() && hash != lr.hash;
  const std::string kind = ctx.multi ? "Deployment" : str(find(workload, {"kind"}));
  inst.rollout = earlier ? kEarlierTemplate : rollout::pending(*workload, kind);
  inst.current = inst.rollout.empty();
  if (*inst.current) {
    ++role.instances_on_current_template;
    return;
  }
  ++role.instances_on_other_templates;
  inst.healthy = false;
  const std::string& ref = inst.workload;
  if (earlier) {
    tally.old_workloads.push_back(ref);
    return;
  }
  tally.rolling.push_back(ref + " (" + inst.rollout + ")");
  for (const auto& pod : inst.pods)
    if (const std::string m = unschedulable_message(pod);
        !m.empty() && std::find(role.rollout_unschedulable.begin(), role.rollout_unschedulable.end(), m) ==
                          role.rollout_unschedulable.end())
      role.rollout_unschedulable.push_back(m);
}

bool told_by_rollout(const Instance& inst, const Pod& pod) {
  return rolling(inst) && !unschedulable_message(pod).empty();
}

void current_lines(const Context& ctx, const LiveRole& lr, const RoleTally& tally, Role& role) {
  const std::string of =
      " of " + std::to_string(role.instances_on_current_template + role.instances_on_other_templates) + " instances ";
  const std::string prefix = "role " + lr.name + ": ";
  if (!tally.old_workloads.empty())
    ctx.report.unready.push_back(prefix + std::to_string(tally.old_workloads.size()) + of +
                                 "run an earlier pod template than " + "spec.template.roles[" +
                                 std::to_string(lr.index) + "] (" + util::join(tally.old_workloads, ", ") +
                                 "): infer-operator never updates an existing instance's workload; " +
                                 operator_rules::recreate_advice(ctx.ns, lr.name, lr.gang, tally.old_workloads));
  if (tally.rolling.empty()) return;
  std::string line =
      prefix + std::to_string(tally.rolling.size()) + of +
      "still run pods of an earlier pod template, their rollout not complete: " + util::join(tally.rolling, ", ");
  if (!role.rollout_unschedulable.empty())
    line += std::string("; ") +
            (ctx.multi ? "a rolling update starts each new pod before it stops an old one (maxSurge), and " : "") +
            "the new pods cannot be scheduled: " + util::join(role.rollout_unschedulable, "; ") +
            (ctx.multi ? " (the rollout needs room for one more pod of the role: free it, e.g. NPUs other pods hold)"
                       : "");
  ctx.report.unready.push_back(line);
}

}  // namespace mindie::status::detail
