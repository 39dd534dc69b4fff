// build_report's gang rebuild detection: a gang instance whose workload infer-operator keeps making again.
#include <algorithm>

#include "mindie/operator_rules.h"
#include "mindie/status_internal.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::status::detail {

namespace json = boost::json;

namespace {

using util::find;
using util::str;

/// Each incarnation of workload `name` of `kind` (StatefulSet, Deployment) since `since` (seconds since the epoch;
/// 0: all): its uid -> when it began. From the controllers' events about it, and from the live workload (`live`, may
/// be null) whose events may not be written yet.
std::map<std::string, std::int64_t> workload_incarnations(const json::array& events, const std::string& kind,
                                                          const std::string& name, const json::value* live,
                                                          std::int64_t since) {
  std::map<std::string, std::int64_t> began;
  for (const auto& e : events) {
    if (str(find(&e, {"involvedObject", "kind"})) != kind || str(find(&e, {"involvedObject", "name"})) != name)
      continue;
    const std::string uid = str(find(&e, {"involvedObject", "uid"}));
    if (uid.empty()) continue;
    const std::int64_t t = event_time(e, "firstTimestamp");
    if (t < since) continue;
    const auto [it, added] = began.try_emplace(uid, t);
    if (!added && t != 0 && (it->second == 0 || t < it->second)) it->second = t;
  }
  if (live) {
    const std::string uid = str(find(live, {"metadata", "uid"}));
    const auto created = util::parse_rfc3339(str(find(live, {"metadata", "creationTimestamp"})));
    if (!uid.empty() && created) began[uid] = *created;
  }
  return began;
}

/// Whether infer-operator has made instance workload `name` more than once since its InstanceSet was made
/// (`instance_set_created`, seconds since the epoch: the workloads of an earlier deployment of the same name, whose
/// events outlive it by an hour, are not this one's), and whether it still is at it (see Rebuild). `live` is the
/// current workload (null when there is none right now: deleted, about to be made again).
std::optional<Rebuild> rebuild_of(const json::array& events, const std::string& kind, const std::string& name,
                                  const json::value* live, std::int64_t instance_set_created,
                                  std::int64_t terminating_pods, std::int64_t now) {
  const auto began = workload_incarnations(events, kind, name, live, instance_set_created);
  // Made twice with nothing going is a re-creation (a scale-in and out, a deliberate delete), not a rebuild; a loop
  // has its first incarnation's pods terminating while the second runs, and a third incarnation soon after.
  if (began.size() < 2 || (began.size() == 2 && terminating_pods == 0 && live != nullptr)) return std::nullopt;
  Rebuild r;
  r.workloads = static_cast<std::int64_t>(began.size());
  r.since = began.begin()->second;
  for (const auto& [uid, t] : began) {
    r.since = std::min(r.since, t);
    r.latest = std::max(r.latest, t);
  }
  r.ongoing = live == nullptr || terminating_pods > 0 || now - r.latest < kRebuildQuietSeconds;
  return r;
}

/// The unready line of an instance infer-operator is rebuilding, with what ends it (operator_rules::gang_ways_out).
std::string rebuild_text(const std::string& ns, const std::string& role, std::int64_t k, const std::string& workload,
                         const Rebuild& r) {
  return "role " + role + " instance " + std::to_string(k) + ": infer-operator is rebuilding it: " + workload +
         " was made " + std::to_string(r.workloads) + " times since " + util::utc_text(r.since, "%H:%M:%S UTC") +
         ", last at " + util::utc_text(r.latest, "%H:%M:%S UTC") +
         " (its rescheduler deletes a gang instance's workload whenever one of its pods is deleted, and the pods of "
         "the deleted workload, going away, count as the next deletion, so it may never stop); to end it, " +
         operator_rules::gang_ways_out(ns, role, k);
}

}  // namespace

void judge_rebuild(const Context& ctx, const LiveRole& lr, Instance& inst, const json::value* live) {
  const std::string workload_name = inst.infer_service + "-" + lr.name + "-" + std::to_string(inst.index);
  const std::string kind = live ? str(find(live, {"kind"})) : str(find(lr.live, {"workload", "kind"}));
  // Without its InstanceSet (not made yet, the operator not running) there is nothing to count from.
  const auto created = lr.instance_set_created.find(inst.infer_service);
  if (created != lr.instance_set_created.end())
    inst.rebuild = rebuild_of(ctx.in.workload_events, kind, workload_name, live, created->second, inst.terminating_pods,
                              ctx.now);
  if (!inst.rebuild || !inst.rebuild->ongoing) return;
  inst.healthy = false;
  ctx.report.unready.push_back(rebuild_text(ctx.ns, lr.name, inst.index,
                                            (kind == "Deployment" ? "deployment/" : "statefulset/") + workload_name,
                                            *inst.rebuild));
  const std::int64_t quiet_at = inst.rebuild->latest + kRebuildQuietSeconds;
  if (quiet_at > ctx.now) ctx.report.recheck_at = std::min(ctx.report.recheck_at.value_or(quiet_at), quiet_at);
}

}  // namespace mindie::status::detail
