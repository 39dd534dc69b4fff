// What `rollout status` shows: per role, how many instances run the current pod template, how many are ready and
// which are still on an earlier one, read from the status report's verdicts (Instance::current, Instance::healthy),
// never judged again. Pure: a status::Report in, a summary out.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "mindie/status_report.h"

namespace mindie::rollout {

/// A wanted instance that does not run its role's current pod template yet.
struct OutOfDate {
  std::string instance;  ///< "INFERSERVICE instance N" (infer_service_set) or "deployment/NAME" (the other modes)
  std::string reason;    ///< Instance::rollout: why it is not current
};

/// One role's rollout.
struct RoleRollout {
  std::string name;
  std::int64_t instances = 0;  ///< the instances the live spec wants (Role::wanted_instances, else spec_instances)
  std::int64_t current = 0;    ///< Role::instances_on_current_template
  std::int64_t ready = 0;      ///< Role::ready_instances (ready includes current)
  std::vector<OutOfDate> out_of_date;
};

/// The rollout of the deployment in one namespace.
struct RolloutStatus {
  std::string ns;
  std::string
      subject;  ///< "inferserviceset.mindcluster.huawei.com/NAME", or "the Deployments of NAME" (multi_deployment)
  std::string deploy_mode;
  /// Rolled out: the report is ready (every wanted instance current and ready, the change observed).
  bool done = false;
  std::vector<RoleRollout> roles;       ///< the roles status shows (Role::unused left out)
  std::vector<std::string> converging;  ///< Report::converging: a controller has not caught up yet
  std::vector<std::string> not_ready;   ///< Report::unready, when not done: why
  /// {apiVersion: "kubectl-mindie/v1", kind: "RolloutStatus", namespace, subject, deployMode, done, roles: [{name,
  /// instances, current, ready, outOfDate: [{instance, reason}]}], converging, notReady}
  boost::json::object to_json() const;
  /// "SUBJECT successfully rolled out" once done; else "Waiting for SUBJECT rollout to finish:" and a line per role
  /// ("  ROLE: C of N instances current, R ready[; on an earlier pod template: INSTANCE (REASON), ...]") and per
  /// converging note. Ends with a newline.
  std::string text() const;
};

/// The rollout summary of `report`, naming the workload `subject` (as wait names it).
RolloutStatus summarize(const status::Report& report, std::string subject);

}  // namespace mindie::rollout
