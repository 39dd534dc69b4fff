// The parts of status::build_report (src/mindie/status_*.cpp), shared between its files; not an API of its own.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "mindie/status_report.h"

namespace mindie::status::detail {

/// (InferService index, instance index): where a pod or workload belongs within a role.
using InstanceKey = std::pair<std::int64_t, std::int64_t>;

/// What build_report is working out, and the inputs every part reads.
struct Context {
  const std::string& ns;
  const StatusInputs& in;
  const std::string& iss_name;  ///< the InferServiceSet (multi_deployment: the workload label)
  bool multi = false;           ///< baseline::runs_deployments of the deploy mode
  std::int64_t now = 0;         ///< seconds since the epoch
  std::int64_t services = 0;    ///< InferServices looked at (multi_deployment: 1)
  Report& report;
  bool& ready;  ///< the verdict so far: any part may clear it
};

/// The live objects by role (status_grouping.cpp): pods, InstanceSets and workloads by the operator's labels,
/// Deployments (multi_deployment) by kubectl-mindie's.
struct Grouped {
  std::map<std::string, std::map<std::int64_t, const boost::json::value*>> deployments;  ///< role -> instance
  std::map<std::string, std::map<InstanceKey, std::vector<const boost::json::value*>>> pods;
  std::map<std::string, std::vector<const boost::json::value*>> instance_sets;
  std::map<std::string, std::map<InstanceKey, const boost::json::value*>> workloads;
};

/// What the live spec asks of one role (status_grouping.cpp).
struct LiveRole {
  std::string name;
  std::int64_t base = 0;   ///< instances in the baseline
  std::int64_t spec = -1;  ///< instances in the live spec (-1: the role is not live)
  std::int64_t pods_per_instance = 0;
  std::size_t index = 0;                           ///< its index in spec.template.roles
  bool hpa = false;                                ///< scalingPolicy HPA
  const boost::json::value* live = nullptr;        ///< the live role (null: none)
  std::map<std::int64_t, std::int64_t> wanted_of;  ///< InferService index -> instances wanted
  std::int64_t wanted_total = 0;
  bool master_standby = false;
  std::int64_t needed_ready = 0;
  std::optional<std::int64_t> observed;
  std::string hash;                                ///< the role's template hash ("" when none)
  std::map<std::string, std::string> spec_images;  ///< container -> image the spec names
  bool gang = false;
  std::map<std::string, std::int64_t> instance_set_created;  ///< InferService -> its InstanceSet's creation
};

/// What the instances of one role add up to (status_instances.cpp).
struct RoleTally {
  bool healthy = false;
  bool operator_missed = false;  ///< a wanted instance lacks pods: the operator's events may say why
  std::set<std::string> other_images;
  std::vector<std::string> old_workloads;  ///< "statefulset/NAME" of wanted instances on an earlier template
  /// "deployment/NAME (why)" of wanted instances whose workload has not rolled out its template (rollout::pending).
  std::vector<std::string> rolling;
};

// ---- shared readers (status_report.cpp) ----

/// util::find from an object: the value at `path` below `obj`, or nullptr.
const boost::json::value* find(const boost::json::object& obj, std::initializer_list<std::string_view> path);
/// status.conditions[type].status of `status` (an object's status), "" when there is none.
std::string condition_status(const boost::json::value* status, std::string_view type);
/// The Ready condition of `obj` ("True", "False", "" when it has none) and its "reason: message".
std::pair<std::string, std::string> ready_condition(const boost::json::value& obj);
/// The time of an event: `field` (firstTimestamp or lastTimestamp), else eventTime, else its creation; 0 when none.
std::int64_t event_time(const boost::json::value& e, std::string_view field);
/// Warning events about the object of `kind` named `name` (and that `uid` when given), newest first, at most `limit`.
std::vector<Event> warning_events(const boost::json::array& events, std::string_view kind, const std::string& name,
                                  std::size_t limit, const std::string& uid = "");
/// A Warning event of infer-operator about `object` ("instanceset/X") in plain words, with its reason and message.
std::string operator_event_text(const std::string& object, const Event& event);
/// "X-<i>" -> i when `value` is exactly the name of one of set `name`'s InferServices; else -1.
std::int64_t service_index(const std::string& value, const std::string& name);

// ---- grouping (status_grouping.cpp) ----

/// multi_deployment: the role (component label, "" when absent) and instance (instance-index label; 0 for the
/// one-instance roles, -1 when unreadable) of a Deployment or pod, by kubectl-mindie's labels.
std::pair<std::string, std::int64_t> deployment_instance(const boost::json::value* labels);
/// The live objects of `ctx.in` by role and instance.
Grouped group_inputs(const Context& ctx);
/// What the live spec (`live_roles`, null when there is no InferServiceSet) and the live objects ask of role `name`
/// (`base` instances in the baseline); drift lines for counts beyond the product's limits; sets role.hpa and
/// role.gang; lists every wanted instance in `grouped.pods`.
LiveRole read_live_role(const Context& ctx, Grouped& grouped, const std::string& name, std::int64_t base,
                        const boost::json::array* live_roles, Role& role);

// ---- instances (status_instances.cpp) ----

/// Judges every instance of role `lr` (pods, health, rebuilds) into `role`, unready lines into the report.
RoleTally judge_instances(const Context& ctx, Grouped& grouped, LiveRole& lr, Role& role);

// ---- current templates (status_current.cpp) ----

/// Whether wanted instance `inst` of role `lr` runs the current pod template (`workload`: its workload, null when
/// none): sets inst.current, inst.rollout and inst.template_hash, clears inst.healthy when not, counts it in `role`
/// and `tally`.
void judge_current(const Context& ctx, const LiveRole& lr, const boost::json::value* workload, Instance& inst,
                   Role& role, RoleTally& tally);
/// Whether `pod`'s reason is told by its role's rollout line instead (a new pod of an instance that is not current
/// that cannot be scheduled): the reason is printed once.
bool told_by_rollout(const Instance& inst, const Pod& pod);
/// The unready lines of role `lr`'s instances that are not current: on an earlier template (with how to re-create
/// them), or not rolled out (with why the new pods cannot be scheduled, each reason once, into role).
void current_lines(const Context& ctx, const LiveRole& lr, const RoleTally& tally, Role& role);

// ---- gang rebuilds (status_rebuild.cpp) ----

/// Gang roles: whether infer-operator is rebuilding wanted instance `inst` (workload `live`, null when none) of
/// `lr`; sets inst.rebuild, and when ongoing clears inst.healthy, adds the unready line and the recheck time.
void judge_rebuild(const Context& ctx, const LiveRole& lr, Instance& inst, const boost::json::value* live);

// ---- drift and convergence (status_drift.cpp) ----

/// The mode's top line: multi_deployment's Deployments (listed, each observed?), else the InferServiceSet's
/// generation; drift when nothing exists.
void judge_live_object(const Context& ctx, const boost::json::object* iss);
/// What the operator said about role `lr`'s InstanceSets, and those lacking the priority-scheduling label.
void judge_instance_sets(const Context& ctx, const Grouped& grouped, const LiveRole& lr, const RoleTally& tally,
                         Role& role);
/// Drift of role `lr` against the baseline (`baseline_usable`) and its own spec: other images, instance counts;
/// convergence of the InstanceSets' counts.
void judge_role_drift(const Context& ctx, const LiveRole& lr, const RoleTally& tally, bool baseline_usable);

// ---- verdict (status_verdict.cpp) ----

/// The InferServices of the set, with the operator's events about those not Ready.
void list_infer_services(const Context& ctx);
/// The report's verdict: infer-operator's word on each InferService, then the warnings of what could not be read.
void final_verdict(const Context& ctx);

// ---- services (status_services.cpp) ----

/// The deployment's Services by name, headless ones left out.
std::vector<ServiceStatus> list_services(const boost::json::array& services);

}  // namespace mindie::status::detail
