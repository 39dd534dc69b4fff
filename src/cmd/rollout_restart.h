// kubectl mindie rollout restart|resume|abort: brings instances to their role's current pod template one at a time,
// as a change kind of the change engine (change::RolloutIntent): each replacement a fenced step, the rollout's
// progress recorded in the namespace lock's intent, so that `resume` continues an interrupted one from any machine
// and any other command first takes back what it changed for the while (recover_rollout).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "change/intent.h"
#include "change/runner.h"
#include "cmd/common.h"
#include "kube/pod_state.h"
#include "kube/watch.h"
#include "mindie/rollout_plan.h"

namespace mindie::cmd {

class NamespaceLock;

/// One run of rollout restart (or resume) in one namespace, with the lock held from its first write to its end.
class RolloutRestart {
 public:
  /// `request`: what to roll (resume: what the interrupted rollout recorded). `timeout`: the whole rollout's bound.
  RolloutRestart(kube::Client& client, Printer& printer, kube::Informer::TransportFactory new_transport, std::string ns,
                 rollout::RestartRequest request, std::chrono::milliseconds timeout,
                 std::chrono::milliseconds lock_wait);
  /// Plans from the live state (refusing, nothing written, what cannot be rolled safely), then replaces each
  /// instance: waits until its role keeps enough ready instances, replaces it (infer_service_set: deletes its
  /// workload, which infer-operator makes again from the current template; Deployments: their own rollout, with
  /// maxSurge 0 under --no-surge, restarted with --all), waits until it runs the current template and is ready.
  /// Throws CommandError (refused, timed out), Interrupted, PartialFailure; an interrupted rollout leaves its intent.
  void run();
  /// The rollout follows `command`'s writes (deploy --rollout, rollback --rollout): a refusal then says that they
  /// stay applied and no pod was replaced, where it would say "nothing was changed".
  RolloutRestart& after(const std::string& command);

 private:
  /// run() itself; run() rewords its refusals after after().
  void run_rollout();
  void run_planned(NamespaceLock& lock, const status::Report& report, const rollout::RestartPlan& plan);
  void roll_role(NamespaceLock& lock, const rollout::RoleRestart& role);
  void roll_instance(NamespaceLock& lock, const rollout::RoleRestart& role, std::size_t k);
  /// Whether `rollout pause` asked this rollout (the lock's holder) to pause: one GET of the Lease.
  bool pause_requested();
  /// Pauses between two instances: removes the temporary instances, records the progress and leaves it in the lock's
  /// intent for `rollout resume`.
  void pause(NamespaceLock& lock);
  /// Adds (`surge` true) or removes the role's temporary instance: the InferServiceSet's replicas by a guarded
  /// JSON Patch.
  void surge_step(NamespaceLock& lock, const std::string& role, std::int64_t from, std::int64_t to);
  /// Replaces `workload` of infer_service_set: deletes it (uid precondition); infer-operator makes it again.
  void delete_step(NamespaceLock& lock, const std::string& workload, const std::string& uid);
  /// Deployments: sets maxSurge 0, maxUnavailable 1 (--no-surge) and, when `restart`, the restartedAt annotation.
  void deployment_steps(NamespaceLock& lock, const std::string& name, bool restart);
  /// Puts back the strategy a --no-surge step replaced.
  void restore_strategy(NamespaceLock& lock, const std::string& name);
  /// Waits (watching) until `done` accepts the report; throws CommandError naming `what` on timeout.
  status::Report wait_for(NamespaceLock& lock, const std::string& what,
                          const std::function<bool(const status::Report&)>& done);
  /// Runs `step` on the runner under the lock with the current intent.
  void run_step(NamespaceLock& lock, change::Step step);
  /// --stop-operator (rollout_operator.cpp): infer-operator's Deployment exists and runs; keeps its pods' selector.
  /// Throws CommandError, nothing written, otherwise.
  void check_operator();
  /// Scales infer-operator's Deployment to 0 (its replicas recorded in the intent first) and waits for its pods to
  /// be gone.
  void stop_operator(NamespaceLock& lock);
  /// Scales it back to the recorded replicas and waits for a pod of it to be ready.
  void start_operator(NamespaceLock& lock);
  /// Once the pods of gang role `role`'s removed instance `index` are gone: stop_operator, start_operator (which
  /// forgets the operator's fault records of them), then clears the role's removed-instance record.
  void forget_removed_instance(NamespaceLock& lock, const std::string& role, std::int64_t index);
  /// The Volcano PodGroups of gang role `role`'s instance `index`, one per InferService of the set.
  std::vector<std::string> pod_group_names(const std::string& role, std::int64_t index) const;
  /// While infer-operator is stopped: deletes the PodGroups the intent records (intent_.pod_groups). The operator
  /// reuses an instance's PodGroup unchanged (Ascend/mind-cluster component/infer-operator/pkg/controller/workload/
  /// podgroup_manager.go, GetOrCreatePodGroupForInstance), so a replaced instance would keep the minMember and
  /// minResources of its old template, and a removed one leave its PodGroup for a later scale-out; started again,
  /// the operator makes each from the current template.
  void drop_pod_groups(NamespaceLock& lock);
  /// Waits (watching the pods `selector` selects in `ns`) until `done` accepts them; throws CommandError naming
  /// `what` on timeout.
  void wait_pods(NamespaceLock& lock, const std::string& ns, const std::string& selector, const std::string& what,
                 const std::function<bool(const std::vector<kube::PodState>&)>& done);
  /// The label selector of instance `index` of `role`'s pods.
  std::string instance_pods(const std::string& role, std::int64_t index) const;
  kube::Client& client_;
  Printer& printer_;
  kube::Informer::TransportFactory new_transport_;
  std::string ns_;
  rollout::RestartRequest request_;
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::milliseconds lock_wait_;
  change::RolloutIntent intent_;
  bool service_set_ = false;
  std::int64_t services_ = 1;      ///< the InferServices of the set (status::service_count)
  std::string after_;              ///< the command whose writes the rollout follows (after()), "" none
  bool stepped_ = false;           ///< a step of the rollout ran (run_step): its refusals are no longer reworded
  std::string operator_selector_;  ///< check_operator: the label selector of infer-operator's pods
  /// Gang roles whose temporary instance infer-operator may hold fault records for (refuse_gang_rebuild_loop): with
  /// --stop-operator, the operator is restarted before that instance is added.
  std::set<std::string> records_to_forget_;
};

/// Annotation on the namespace lock's Lease by `rollout pause`: the holderIdentity of the rollout asked to pause. The
/// rollout it names stops before its next instance; a later rollout (another identity) ignores it.
inline constexpr const char* kRolloutPauseAnnotation = "kubectl-mindie/rollout-pause";

/// Asks the rollout running in `ns` to pause (kRolloutPauseAnnotation, a merge patch guarded by the Lease's
/// resourceVersion, read again on a conflict). Throws CommandError when no rollout holds the lock.
void request_pause(kube::Client& client, const std::string& ns);

/// The rollout intent the namespace's lock holds (an interrupted rollout), if any: one GET of the Lease.
std::optional<change::RolloutIntent> recorded_rollout(kube::Client& client, const std::string& ns);

/// Takes back what an interrupted rollout changed for the while: starts infer-operator again if it stopped it, removes
/// its surge instances (the roles' replicas back to what they were before; a gang role's recorded as a scale-in
/// records them), puts back the strategies of Deployments it rolled without surge. The instances it
/// replaced stay replaced. Returns what it did, for the recovery line. Throws what the writes throw.
std::string settle_rollout(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                           const change::RolloutIntent& intent);

/// Starts infer-operator again where `intent` stopped it (its Deployment still at 0), once no pod of infer-operator's
/// in `ns` is terminating (it would record their deletion), after deleting the PodGroups the intent records: what it
/// did, "" nothing. Throws CommandError when they do not go within 10 minutes, or when the user may not start it.
std::string restore_operator(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                             const change::RolloutIntent& intent);

}  // namespace mindie::cmd
