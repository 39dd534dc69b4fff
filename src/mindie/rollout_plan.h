// What `rollout restart` replaces, in which order and how each role stays available: planned from the status
// report's verdicts (Instance::current, Instance::healthy), refused before any write where a role cannot be rolled
// safely. Pure: a status::Report in, a plan out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mindie/status_report.h"

namespace mindie::rollout {

/// What the user asked `rollout restart` for.
struct RestartRequest {
  std::vector<std::string> roles;  ///< --role; empty: every role
  bool all = false;                ///< --all: instances already current too
  bool surge = true;               ///< false: --no-surge
  bool allow_downtime = false;
  int max_unavailable = 1;
  std::vector<std::string> done;  ///< instances a resumed rollout replaced already (Instance::workload)
  /// --stop-operator: gang roles may be rolled by stopping infer-operator while each old instance's pods go.
  bool stop_operator = false;
  /// rollout restart's defaults (every role), as deploy --rollout and rollback --rollout roll, with --stop-operator.
  static RestartRequest defaults(bool stop_operator) {
    RestartRequest r;
    r.stop_operator = stop_operator;
    return r;
  }
};

/// One role's part of the rollout.
struct RoleRestart {
  std::string role;
  std::vector<std::int64_t> indexes;   ///< the instances to replace, in index order
  std::vector<std::string> workloads;  ///< their workloads (Instance::workload)
  std::int64_t instances = 0;          ///< the instances the role runs
  /// Ready instances the role keeps while one is replaced: instances - max_unavailable, at least 1; 0 with downtime.
  std::int64_t keep_ready = 0;
  /// infer_service_set: a temporary instance is added first (the role's replicas + 1) and removed at the end, since
  /// replacing one would leave fewer than keep_ready ready.
  bool surge = false;
  /// infer_service_set, gang-scheduled: infer-operator is stopped while each replaced (and the temporary) instance's
  /// pods go, so that its rescheduler records no fault for them (--stop-operator).
  bool gang = false;
};

/// The rollout, or why it cannot start.
struct RestartPlan {
  std::vector<RoleRestart> roles;     ///< roles with instances to replace, in the report's order
  std::vector<std::string> refusals;  ///< "role decode: ..." each; non-empty: nothing may be written
};

/// Plans `req` over `report`. infer_service_set instances are replaced one at a time by deleting their workload
/// (infer-operator makes it again from the role's current template); gang-scheduled roles are refused unless
/// --stop-operator (infer-operator rebuilds a gang instance whose pods are deleted while it runs in a loop:
/// operator_rules::gang_ways_out). A role of one instance
/// needs a surge (infer_service_set: a temporary instance through the role's replicas, whose pods serve while the
/// instance is replaced — for the master/standby controller and coordinator, its pods stand by to take over; the
/// other modes: the Deployment's own maxSurge) or --allow-downtime. An HPA-owned role cannot be surged.
RestartPlan plan_restart(const status::Report& report, const RestartRequest& req);

/// Whether `role` of `report` runs instance `index` on its current template, ready, on a workload other than
/// `replaced_uid` ("" any): the end of that instance's replacement.
bool replaced(const status::Report& report, const std::string& role, std::int64_t index,
              const std::string& replaced_uid);

/// Instances of `role` in `report` serving on whichever template (every pod ready, or for a master/standby role one,
/// none terminating), instance `except` left out (-1 none).
std::int64_t ready_instances(const status::Report& report, const std::string& role, std::int64_t except = -1);

}  // namespace mindie::rollout
