// rollout restart's gang-scheduled roles (--stop-operator): infer-operator is stopped while an old instance's pods
// go, so that its rescheduler never sees them go, and started again to make the instance from the current template
// (cmd/rollout_restart.h).
//
// Why stopping is the way: the rescheduler records a fault for the workload of every deleted pod of a gang-scheduled
// InstanceSet, keeps it in the operator process's memory only, and deletes the workload of that name whenever it
// finds one, so a new instance would be deleted and made again for ever (Ascend/mind-cluster
// component/infer-operator/pkg/controller/rescheduling/rescheduling.go: handlePodDelete, recordWorkLoadFault,
// DoRescheduling). A process that starts lists pods: it gets no delete event for a pod that went while it was down.
#include <algorithm>
#include <ctime>
#include <thread>

#include "cmd/gang_instances.h"
#include "cmd/interrupt.h"
#include "cmd/lock.h"
#include "cmd/rights.h"
#include "cmd/rollout_restart.h"
#include "kube/access_review.h"
#include "kube/pod_state.h"
#include "kube/retry_on_conflict.h"
#include "kube/watch.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "util/json_path.h"
#include "util/strings.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

const std::string kOperatorRef = std::string("deployment.apps/") + operator_rules::kOperatorDeployment + " -n " +
                                 operator_rules::kOperatorNamespace;

/// The annotation a --stop-operator rollout puts on infer-operator's Deployment while it has it stopped: the
/// rollout's namespace. infer-operator serves every namespace, so one rollout at a time may stop it: another finds
/// the mark and refuses, and only the rollout it names starts the operator again.
constexpr const char* kStoppedByAnnotation = "kubectl-mindie/stopped-by";

std::int64_t replicas_of(const json::value& deployment) {
  return util::num(util::find(&deployment, {"spec", "replicas"}), 1);
}

std::string stopped_by(const json::value& deployment) {
  return util::str(util::find(&deployment, {"metadata", "annotations", kStoppedByAnnotation}));
}

json::value live_operator(kube::Client& client) {
  return client.get(kube::gvr::kDeployments, operator_rules::kOperatorNamespace, operator_rules::kOperatorDeployment);
}

/// Scales infer-operator's Deployment to `replicas`, marked stopped by namespace `ns` ("": the mark removed), by a
/// merge patch guarded by the resourceVersion just read, once `check` accepts what was read (it throws otherwise). A
/// conflict (the deployment controller writes the Deployment's status too) reads, checks and patches again.
void set_operator(kube::Client& client, std::int64_t replicas, const std::string& ns,
                  const std::function<void(const json::value&)>& check = {}) {
  kube::WriteOptions opts;
  opts.field_manager = render::kFieldManager;
  const json::value mark = ns.empty() ? json::value(nullptr) : json::value(ns);
  kube::retry_on_conflict(5, [&](int) {
    const json::value live = live_operator(client);
    if (check) check(live);
    const json::object patch{{"metadata",
                              {{"resourceVersion", util::str(util::find(&live, {"metadata", "resourceVersion"}))},
                               {"annotations", {{kStoppedByAnnotation, mark}}}}},
                             {"spec", {{"replicas", replicas}}}};
    client.patch(kube::gvr::kDeployments, operator_rules::kOperatorNamespace, operator_rules::kOperatorDeployment,
                 kube::PatchType::Merge, patch, opts);
  });
}

/// Whether infer-operator's Deployment runs `replicas` with the mark `ns` ("": none).
bool operator_is(kube::Client& client, std::int64_t replicas, const std::string& ns) {
  const auto live = client.get_if_exists(kube::gvr::kDeployments, operator_rules::kOperatorNamespace,
                                         operator_rules::kOperatorDeployment);
  return live && replicas_of(json::value(*live)) == replicas && stopped_by(json::value(*live)) == ns;
}

/// Refuses to stop infer-operator where it does not run, or another rollout stopped it.
void check_running(const json::value& live) {
  if (const std::string by = stopped_by(live); !by.empty())
    throw CommandError("infer-operator is stopped by the rollout in namespace " + by + " (" + kOperatorRef +
                       ", annotation " + kStoppedByAnnotation + "): one rollout at a time may stop it; wait until " +
                       "that one has started it again");
  if (replicas_of(live) < 1)
    throw CommandError("--stop-operator: " + kOperatorRef +
                       " runs no replicas: infer-operator is stopped, and nothing would make the replaced instances "
                       "again");
}

}  // namespace

void RolloutRestart::check_operator() {
  if (const auto denied = kube::denied(client_, rights::stop_operator_rights()); !denied.empty())
    throw CommandError("--stop-operator needs rights your user does not have in namespace " +
                       std::string(operator_rules::kOperatorNamespace) + ": " + rights::describe(denied) +
                       "; nothing was changed");
  // The replaced instances' Volcano PodGroups go with them (drop_pod_groups).
  if (const auto denied = kube::denied(client_, {{"get", kube::gvr::kPodGroups.group, "podgroups", ns_},
                                                 {"delete", kube::gvr::kPodGroups.group, "podgroups", ns_}});
      !denied.empty())
    throw CommandError("--stop-operator needs rights your user does not have in namespace " + ns_ + ": " +
                       rights::describe(denied) + "; nothing was changed");
  const auto live = client_.get_if_exists(kube::gvr::kDeployments, operator_rules::kOperatorNamespace,
                                          operator_rules::kOperatorDeployment);
  if (!live)
    throw CommandError("--stop-operator: infer-operator's Deployment " + kOperatorRef +
                       " (where its published manifest installs it) does not exist, nothing was changed");
  const json::value v = *live;
  try {
    check_running(v);
  } catch (const CommandError& e) {
    throw CommandError(std::string(e.what()) + "; nothing was changed");
  }
  std::string selector;
  if (const auto* labels = util::find(&v, {"spec", "selector", "matchLabels"}); labels && labels->is_object())
    for (const auto& [k, value] : labels->get_object())
      selector += (selector.empty() ? "" : ",") + std::string(k) + "=" + util::str(&value);
  if (selector.empty())
    throw CommandError("--stop-operator: " + kOperatorRef +
                       " selects its pods without matchLabels, nothing was changed");
  operator_selector_ = selector;
}

void RolloutRestart::stop_operator(NamespaceLock& lock) {
  const json::value live = live_operator(client_);
  check_running(live);  // refused here, the intent keeps what the rollout changed so far, for the next command
  const std::int64_t replicas = replicas_of(live);
  intent_.operator_replicas = static_cast<int>(replicas);  // recorded before the write: recovery starts it again
  run_step(lock, {kOperatorRef.substr(0, kOperatorRef.find(' ')), "scaled",
                  [this, replicas] {
                    set_operator(client_, 0, ns_, [replicas](const json::value& now) {
                      check_running(now);
                      if (replicas_of(now) != replicas)
                        throw CommandError(kOperatorRef + " changed while it was stopped");
                    });
                  },
                  [this] { return operator_is(client_, 0, ns_); },
                  [this, replicas] { set_operator(client_, replicas, ""); }});
  printer_.notice("infer-operator stopped (" + kOperatorRef + " scaled to 0): every namespace's reconciles wait");
  wait_pods(lock, operator_rules::kOperatorNamespace, operator_selector_, "infer-operator's pods to be gone",
            [](const std::vector<kube::PodState>& pods) { return pods.empty(); });
}

void RolloutRestart::start_operator(NamespaceLock& lock) {
  const std::int64_t replicas = intent_.operator_replicas;
  run_step(lock, {kOperatorRef.substr(0, kOperatorRef.find(' ')),
                  "scaled",
                  [this, replicas] { set_operator(client_, replicas, ""); },
                  [this, replicas] { return operator_is(client_, replicas, ""); },
                  {}});  // the operator runs again: nothing to take back
  intent_.operator_replicas = 0;
  intent_.replacing.clear();
  intent_.pod_groups.clear();
  lock.before_write(change::Intent{intent_});
  printer_.notice("infer-operator started again (" + kOperatorRef + " scaled to " + std::to_string(replicas) + ")");
  wait_pods(lock, operator_rules::kOperatorNamespace, operator_selector_, "infer-operator to run again",
            [](const std::vector<kube::PodState>& pods) {
              return std::any_of(pods.begin(), pods.end(),
                                 [](const kube::PodState& p) { return p.ready && !p.terminating; });
            });
}

void RolloutRestart::forget_removed_instance(NamespaceLock& lock, const std::string& role, std::int64_t index) {
  wait_pods(lock, ns_, instance_pods(role, index),
            "the pods of role " + role + "'s removed instance " + std::to_string(index) + " to be gone",
            [](const std::vector<kube::PodState>& pods) { return pods.empty(); });
  intent_.pod_groups = pod_group_names(role, index);  // as a scale-in removes them (cmd/pod_groups.h)
  stop_operator(lock);
  drop_pod_groups(lock);
  start_operator(lock);
  clear_removed_gang_instances(client_, ns_, client_.get(kube::gvr::kInferServiceSets, ns_, intent_.workload), role,
                               printer_);
}

void RolloutRestart::wait_pods(NamespaceLock& lock, const std::string& ns, const std::string& selector,
                               const std::string& what,
                               const std::function<bool(const std::vector<kube::PodState>&)>& done) {
  kube::Informer informer(new_transport_, {{kube::gvr::kPods, ns, selector, ""}});
  informer.start();
  for (;;) {
    std::vector<kube::PodState> pods;
    for (const auto& p : informer.objects(0)) pods.push_back(kube::read_pod_state(json::value(p), std::time(nullptr)));
    if (done(pods)) return;
    check_interrupt("while waiting for " + what + " (kubectl mindie rollout resume -n " + ns_ + " continues)");
    lock.renew();
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline_) throw CommandError("timed out waiting for " + what + " (--timeout)");
    informer.wait_for_change(std::min(deadline_, now + std::chrono::seconds(1)));
  }
}

namespace {

/// The pods a started operator would see go: those of the instance the rollout was replacing (`replacing`, a label
/// selector; "" none), which the garbage collector may not have marked for deletion yet, and every instance pod of
/// namespace `ns` being deleted.
std::vector<std::string> pods_going(kube::Client& client, const std::string& ns, const std::string& replacing) {
  std::vector<std::string> names;
  const auto add = [&](const json::value& pods, bool terminating_only) {
    if (const auto* items = util::find(&pods, {"items"}); items && items->is_array())
      for (const auto& p : items->as_array())
        if (!terminating_only || util::find(&p, {"metadata", "deletionTimestamp"}) != nullptr)
          names.push_back(util::str(util::find(&p, {"metadata", "name"})));
  };
  if (!replacing.empty()) add(client.list(kube::gvr::kPods, ns, replacing), false);
  add(client.list(kube::gvr::kPods, ns, "infer.huawei.com/instanceset-index"), true);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

/// restore_operator's work, its rights granted.
std::string start_once_pods_gone(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                 const change::RolloutIntent& intent) {
  const auto live = client.get_if_exists(kube::gvr::kDeployments, operator_rules::kOperatorNamespace,
                                         operator_rules::kOperatorDeployment);
  if (!live || stopped_by(json::value(*live)) != ns) return "";  // not stopped by this rollout (any more)
  // The instance the rollout deleted may still be going: started before its pods are gone, the operator would
  // record their deletion and rebuild the instance in a loop. No watch here (a recovery has only the client): a LIST
  // a second, within the longest grace period the templates give.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  for (auto going = pods_going(client, ns, intent.replacing); !going.empty();
       going = pods_going(client, ns, intent.replacing)) {
    if (std::chrono::steady_clock::now() > give_up)
      throw CommandError("infer-operator stays stopped (" + kOperatorRef + " at 0 replicas): pods of namespace " + ns +
                         " are still going (" + util::join(going, ", ") +
                         "), and the operator must not see them go; run the command again once they are gone");
    check_interrupt("while waiting for the pods the rollout deleted to be gone before infer-operator starts again");
    lock.renew();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::vector<std::string> did;
  for (const auto& name : intent.pod_groups) {  // as the rollout would have (RolloutRestart::drop_pod_groups)
    // Only the set's own: the intent is the Lease's annotation, which others may write.
    if (!name.starts_with(operator_rules::workload_pod_group(intent.workload + "-"))) continue;
    try {
      client.remove(kube::gvr::kPodGroups, ns, name);
      did.push_back("deleted podgroup." + kube::gvr::kPodGroups.group + "/" + name);
    } catch (const kube::ApiError& e) {
      if (!e.is_not_found()) throw;
    }
  }
  set_operator(client, intent.operator_replicas, "");
  did.push_back("started infer-operator again (" + kOperatorRef + " scaled to " +
                std::to_string(intent.operator_replicas) + ")");
  return util::join(did, ", ");
}

}  // namespace

std::string restore_operator(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                             const change::RolloutIntent& intent) {
  if (intent.operator_replicas < 1) return "";
  try {
    return start_once_pods_gone(client, lock, ns, intent);
  } catch (const kube::ApiError& e) {
    // Another user's command meets the rollout's intent: the recovery is theirs to run, the rights perhaps not.
    if (e.code() != 403) throw;
    throw CommandError("infer-operator stays stopped (" + kOperatorRef + " at 0 replicas) by the interrupted rollout " +
                       "in namespace " + ns + ", and your user may not start it again: " + e.status_message() +
                       "; a user who may get and patch it, and list pods and delete podgroups in namespace " + ns +
                       ", runs kubectl mindie rollout abort -n " + ns);
  }
}

}  // namespace mindie::cmd
