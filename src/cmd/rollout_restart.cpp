#include "cmd/rollout_restart.h"

#include "cmd/gang_instances.h"
#include "cmd/interrupt.h"
#include "cmd/lock.h"
#include "cmd/logs_streams.h"
#include "cmd/npu_preflight.h"
#include "cmd/status_inputs.h"
#include "cmd/wait.h"
#include "mindie/config.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "mindie/scale_plan.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// "statefulset/NAME" -> its GVR and NAME.
std::pair<const kube::GVR*, std::string> split_workload(const std::string& workload) {
  const auto slash = workload.find('/');
  const std::string kind = workload.substr(0, slash);
  return {kind == "statefulset" ? &kube::gvr::kStatefulSets : &kube::gvr::kDeployments, workload.substr(slash + 1)};
}

/// Thrown between two instances when `rollout pause` asked for it.
struct Paused {};

std::string refusal_text(const std::string& ns, const std::vector<std::string>& refusals) {
  std::string out = "cannot roll out the deployment in namespace " + ns + ", nothing was changed:";
  for (const auto& r : refusals) out += "\n* " + r;
  return out;
}

}  // namespace

RolloutRestart::RolloutRestart(kube::Client& client, Printer& printer, kube::Informer::TransportFactory new_transport,
                               std::string ns, rollout::RestartRequest request, std::chrono::milliseconds timeout,
                               std::chrono::milliseconds lock_wait)
    : client_(client),
      printer_(printer),
      new_transport_(std::move(new_transport)),
      ns_(std::move(ns)),
      request_(std::move(request)),
      deadline_(timeout.count() == 0 ? std::chrono::steady_clock::time_point::max()
                                     : std::chrono::steady_clock::now() + timeout),
      lock_wait_(lock_wait) {}

RolloutRestart& RolloutRestart::after(const std::string& command) {
  after_ = command;
  return *this;
}

void RolloutRestart::run() {
  if (after_.empty()) return run_rollout();
  // What refuses before the rollout's first write (the lock, the plan, the checks) says "nothing was changed" or
  // "nothing was written"; after `after_` wrote, that is said of the pods.
  const auto reword = [this](std::string what) {
    const std::string instead = "the " + after_ + " stays applied and no pod was replaced";
    for (const std::string phrase : {"nothing was changed", "Nothing was changed", "nothing was written"})
      for (auto at = what.find(phrase); at != std::string::npos; at = what.find(phrase, at + instead.size()))
        what.replace(at, phrase.size(), phrase[0] == 'N' ? "T" + instead.substr(1) : instead);
    return what;
  };
  try {
    run_rollout();
  } catch (const Interrupted& e) {
    if (stepped_) throw;
    throw Interrupted(e.signal(), reword(e.what()));
  } catch (const CommandError& e) {
    if (stepped_) throw;  // a step's own refusal after others changed pods speaks of that step
    throw CommandError(reword(e.what()));
  }
}

void RolloutRestart::run_rollout() {
  NamespaceLock lock(client_, printer_, ns_, "rollout", lock_wait_);
  lock.recover_first();
  for (int attempt = 0;; ++attempt) {
    try {
      const status::Report report = status::build_report(ns_, read_status_inputs(client_, ns_),
                                                         std::chrono::system_clock::now());
      const rollout::RestartPlan plan = rollout::plan_restart(report, request_);
      if (!plan.refusals.empty()) throw CommandError(refusal_text(ns_, plan.refusals));
      if (plan.roles.empty()) {
        printer_.summary("every instance in namespace " + ns_ + " runs its role's current pod template" +
                         (request_.roles.empty() ? "" : " in the roles asked for") + ": nothing to roll");
        lock.done();
        return;
      }
      try {
        run_planned(lock, report, plan);
      } catch (const Paused&) {
        pause(lock);
        return;  // the lock is freed with the intent kept (NamespaceLock's destructor)
      } catch (...) {
        if (intent_.operator_replicas > 0)
          printer_.notice("Warning: infer-operator is left stopped for every namespace (deployment.apps/" +
                          std::string(operator_rules::kOperatorDeployment) + " -n " +
                          operator_rules::kOperatorNamespace + " at 0 replicas): kubectl mindie rollout abort -n " +
                          ns_ + " starts it again once the replaced instance's pods are gone");
        throw;
      }
      lock.done();
      return;
    } catch (const PlanAgain&) {
      if (attempt > 0) throw;  // a second contention: the lock is ours from the first
    }
  }
}

void RolloutRestart::run_planned(NamespaceLock& lock, const status::Report& report, const rollout::RestartPlan& plan) {
  service_set_ = report.deploy_mode == config::to_string(config::DeployMode::InferServiceSet);
  intent_ = change::RolloutIntent{report.deploy_mode,
                                  report.name,
                                  request_.roles,
                                  request_.all,
                                  request_.surge,
                                  request_.allow_downtime,
                                  request_.max_unavailable,
                                  request_.done,
                                  {},
                                  {},
                                  request_.stop_operator,
                                  0,
                                  {},
                                  {}};
  if (std::any_of(plan.roles.begin(), plan.roles.end(), [](const auto& rr) { return rr.gang; })) {
    check_operator();
    // Stopped before it copied a changed template into the InstanceSets, it would make the new instances from the
    // old one. Once is enough: no other command changes the templates while the rollout holds the lock.
    wait_for(lock, "infer-operator to give the InstanceSets their role's current pod template",
             [](const status::Report& r) {
               return std::all_of(r.roles.begin(), r.roles.end(),
                                  [](const auto& role) { return role.instance_sets_on_other_templates.empty(); });
             });
  }
  if (service_set_) {
    // The temporary instances must find NPUs, as a scale-out's (npu_preflight.h), before any write.
    json::object iss = client_.get(kube::gvr::kInferServiceSets, ns_, report.name);
    json::object surged = iss;
    std::map<std::string, int> targets;
    for (const auto& rr : plan.roles)
      if (rr.surge) targets[rr.role] = static_cast<int>(rr.instances + 1);
    const auto changes = scale::plan_role_changes(iss, targets);
    // A gang role's temporary instance must not be one infer-operator still holds a fault record for (one that an
    // interrupted rollout or a scale removed), unless the rollout may restart the operator, which forgets them.
    for (const auto& c : changes) {
      try {
        refuse_gang_rebuild_loop(client_, ns_, iss, {c}, false);
      } catch (const CommandError&) {
        if (!request_.stop_operator) throw;
        records_to_forget_.insert(c.role);
      }
    }
    for (const auto& c : changes)
      surged.at("spec").at("template").at("roles").as_array().at(c.index).as_object()["replicas"] = c.to;
    services_ = status::service_count(iss);
    const std::vector<std::string> resources = npu_resources();
    check_npu_fit(client_, printer_,
                  {node_fit::added_demands(node_fit::npu_demands({iss}, resources),
                                           node_fit::npu_demands({surged}, resources)),
                   "", "the temporary instances' pods",
                   "free or add nodes, or pass --no-surge --allow-downtime to replace instances without one", ""});
  }
  for (const auto& rr : plan.roles) roll_role(lock, rr);
}

void RolloutRestart::roll_role(NamespaceLock& lock, const rollout::RoleRestart& rr) {
  if (rr.surge && records_to_forget_.count(rr.role) > 0) forget_removed_instance(lock, rr.role, rr.instances);
  if (rr.surge) {
    intent_.surged[rr.role] = static_cast<int>(rr.instances);
    surge_step(lock, rr.role, rr.instances, rr.instances + 1);
    wait_for(lock, "the temporary instance of role " + rr.role + " to be ready",
             [&](const status::Report& r) { return rollout::ready_instances(r, rr.role) >= rr.instances + 1; });
  }
  for (std::size_t k = 0; k < rr.indexes.size(); ++k) roll_instance(lock, rr, k);
  if (rr.surge) {
    surge_step(lock, rr.role, rr.instances + 1, rr.instances);
    intent_.surged.erase(rr.role);
    // The operator saw the temporary instance's pods go and holds their fault records: a restart forgets them.
    if (rr.gang) forget_removed_instance(lock, rr.role, rr.instances);
  }
  printer_.notice("role " + rr.role + ": " + std::to_string(rr.indexes.size()) + " of " + std::to_string(rr.instances) +
                  " instances replaced, every one on the current pod template");
}

void RolloutRestart::roll_instance(NamespaceLock& lock, const rollout::RoleRestart& rr, std::size_t k) {
  const std::string& workload = rr.workloads[k];
  const std::int64_t index = rr.indexes[k];
  if (lock.held() && pause_requested()) throw Paused{};
  // Never fewer ready than the role keeps: wait for the others (a pod restarting, the previous replacement).
  const status::Report before =
      wait_for(lock, "role " + rr.role + " to have " + std::to_string(rr.keep_ready) + " other instances ready",
               [&](const status::Report& r) { return rollout::ready_instances(r, rr.role, index) >= rr.keep_ready; });
  std::string uid;
  bool current = false;
  for (const auto& role : before.roles)
    for (const auto& inst : role.instances)
      if (role.name == rr.role && inst.index == index && inst.workload == workload) {
        uid = inst.workload_uid;
        current = inst.current == true;
      }
  const auto [gvr, name] = split_workload(workload);
  if (rr.gang) {
    // Its pods go while infer-operator is stopped, so its rescheduler records no fault for them; started again, it
    // makes the instance from the current template.
    stop_operator(lock);
    // Recorded with the delete: recovery waits for these pods, then deletes these PodGroups.
    intent_.replacing = instance_pods(rr.role, index);
    intent_.pod_groups = {operator_rules::workload_pod_group(name)};
    try {
      delete_step(lock, workload, uid);
    } catch (const PartialFailure&) {
      throw;  // the delete may have reached the server: its pods may be going
    } catch (...) {
      intent_.replacing.clear();  // refused: its pods stay, and recovery must not wait for them
      intent_.pod_groups.clear();
      lock.before_write(change::Intent{intent_});
      throw;
    }
    wait_pods(lock, ns_, instance_pods(rr.role, index), workload + "'s pods to be gone",
              [](const std::vector<kube::PodState>& pods) { return pods.empty(); });
    drop_pod_groups(lock);
    start_operator(lock);
  } else if (service_set_) {
    delete_step(lock, workload, uid);
  } else {
    deployment_steps(lock, name, current);
  }
  wait_for(lock, workload + " to run the current pod template and be ready", [&](const status::Report& r) {
    if (!service_set_ && request_.surge)
      for (const auto& role : r.roles)
        if (role.name == rr.role && !role.rollout_unschedulable.empty())
          throw CommandError("the new pod of " + workload + " cannot be scheduled (" +
                             role.rollout_unschedulable.front() +
                             "): replace pods in place with --no-surge (and --allow-downtime for a role of one "
                             "instance); kubectl mindie rollout resume -n " +
                             ns_ + " --no-surge continues");
    return rollout::replaced(r, rr.role, index, service_set_ ? uid : "");
  });
  if (!service_set_ && !request_.surge) restore_strategy(lock, name);
  intent_.done.push_back(workload);
  lock.before_write(change::Intent{intent_});  // the progress, for resume
  printer_.mutation(*gvr, name, "restarted", DryRun::None);
}

status::Report RolloutRestart::wait_for(NamespaceLock& lock, const std::string& what,
                                        const std::function<bool(const status::Report&)>& done) {
  const Watched w = watch_reports(client_, new_transport_, ns_, deadline_, done, [&] {
    check_interrupt("while waiting for " + what + " (kubectl mindie rollout resume -n " + ns_ + " continues)");
    lock.renew();
  });
  if (!w.accepted) throw CommandError("timed out waiting for " + what + " (--timeout)");
  return w.report;
}

void RolloutRestart::run_step(NamespaceLock& lock, change::Step step) {
  // Once a step writes, the lock is held (the fence's take, whose refusals are still the rollout's first).
  step.write = [this, write = std::move(step.write)] {
    stepped_ = true;
    write();
  };
  LockFence fence(lock, change::Intent{intent_});
  change::Wording wording;
  wording.change = "rollout";
  wording.recovery = "kubectl mindie rollout resume -n " + ns_ +
                     " continues the rollout; any other kubectl-mindie command in the namespace first takes back its "
                     "temporary instance and strategies (kubectl mindie rollout abort -n " +
                     ns_ + " does only that)";
  change::Runner runner(fence, wording);
  try {
    runner.run({std::move(step)});
  } catch (...) {
    // A step refused before it wrote leaves nothing of its own to recover, but the rollout's earlier steps may have:
    // a stopped operator, a temporary instance, a replaced strategy. The intent stays for the next command.
    if (intent_.operator_replicas > 0 || !intent_.surged.empty() || !intent_.strategies.empty()) lock.keep_intent();
    throw;
  }
}

void RolloutRestart::delete_step(NamespaceLock& lock, const std::string& workload, const std::string& uid) {
  const auto parts = split_workload(workload);  // named, not bound: lambdas capture them (C++20 bindings: not yet)
  const kube::GVR r = *parts.first;
  const std::string name = parts.second;
  run_step(lock, {r.kind_dot_group() + "/" + name,
                  "deleted",
                  [this, r, name, uid] { client_.remove_exact(r, ns_, name, uid, ""); },
                  [this, r, name, uid] {
                    const auto live = client_.get_if_exists(r, ns_, name);
                    const json::value v = live ? json::value(*live) : json::value();
                    return !live || util::str(util::find(&v, {"metadata", "uid"})) != uid;
                  },
                  {}});  // infer-operator makes it again from the current template: nothing to undo
}

}  // namespace mindie::cmd
