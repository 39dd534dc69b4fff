#include "cmd/delete.h"

#include <algorithm>
#include <iostream>

#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/list_inputs.h"
#include "cmd/wait.h"
#include "mindie/baseline.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_delete_flags(po::options_description& desc, DeleteFlags& flags) {
  desc.add_options()("dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
                     "none, client (only print what would be deleted) or server (send with dryRun=All)")(
      "wait", po::bool_switch(&flags.wait), "Wait until the workload and its pods are gone")(
      "timeout", po::value(&flags.timeout)->default_value("10m"), "How long --wait waits (30s, 10m, 1h)")(
      "ignore-not-found", po::bool_switch(&flags.ignore_not_found),
      "--framework aibrix --app: a StormService that does not exist is not an error (without --app, finding nothing "
      "never is)");
  flags.output.bind(desc);
  add_lock_flags(desc, flags.lock);
}

DeleteOptions::DeleteOptions(DeleteFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void DeleteOptions::validate() {
  if (namespace_flag_.empty())
    throw UsageError("-n NAMESPACE is required: delete removes the deployment of one namespace (its job_id)");
  check_namespace_syntax(namespace_flag_);
  flags_.output.validate();
  WaitAfterFlags w{flags_.wait, flags_.timeout};
  timeout_ = check_wait_after_flags(w, dry_run_);
}

void DeleteOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

bool DeleteOptions::remove(kube::Client& client, const DeleteTarget& t) const {
  if (dry_run_ == DryRun::Client) return client.get_if_exists(t.gvr, t.ns, t.name).has_value();
  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  try {
    if (t.uid.empty()) client.remove(t.gvr, t.ns, t.name, opts);
    else client.remove_exact(t.gvr, t.ns, t.name, t.uid, t.resource_version, opts);
  } catch (const kube::ApiError& e) {
    if (e.is_not_found()) return false;  // gone meanwhile (or a re-run): idempotent
    throw;
  }
  return true;
}

change::Step DeleteOptions::delete_step(kube::Client& client, const DeleteTarget& t,
                                        std::function<void(const DeleteTarget&)> deleted) const {
  change::Step step;
  step.name = t.gvr.kind_dot_group() + "/" + t.name;
  step.verb = "deleted";
  step.write = [this, &client, t, deleted] {
    if (remove(client, t)) deleted(t);
  };
  // A delete whose answer was lost: gone, being deleted, or replaced by another object of the name.
  step.applied = [&client, t, deleted] {
    const bool gone = delete_took_effect(client, t);
    if (gone) deleted(t);
    return gone;
  };
  return step;  // no undo: a delete cannot be taken back; a delete stopped half-way is finished by the next command
}

void DeleteOptions::wait_gone(const std::vector<kube::WatchTarget>& gone,
                              const kube::Informer::TransportFactory& new_transport, NamespaceLock& lock) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  kube::Informer informer(new_transport, gone);
  informer.start();
  const auto left = [&] {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < gone.size(); ++i)
      for (auto& obj : informer.objects(i)) {
        const json::value v(std::move(obj));
        names.push_back(gone[i].gvr.kind_dot_group() + "/" + util::str(util::find(&v, {"metadata", "name"})));
      }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  };
  for (;;) {
    const auto remaining = left();
    if (remaining.empty()) return;
    // Woken every second to see a noted Ctrl-C (the namespace lock's InterruptGuard holds signals back) and to
    // renew the lock when due: it is held through the wait.
    check_interrupt("while waiting for the deletion of the deployment in namespace " + namespace_flag_ +
                    ": the deletions were sent; configmap/" + baseline::kConfigMapName +
                    " (the record) is kept: "
                    "re-run kubectl mindie delete -n " +
                    namespace_flag_ + " --wait to finish");
    const auto wake = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1));
    if (!informer.wait_for_change(wake)) {
      if (std::chrono::steady_clock::now() < deadline) {
        lock.renew();  // held through the wait, its intent kept (the record is deleted after it)
        continue;
      }
      const auto still = left();
      if (still.empty()) return;
      std::string message = "timed out waiting for the deletion of the deployment in namespace " + namespace_flag_ +
                            "; still there:";
      for (const auto& n : still) message += "\n* " + n;
      message += "\nconfigmap/" + std::string(baseline::kConfigMapName) +
                 " (the record) is kept: re-run kubectl mindie "
                 "delete -n " +
                 namespace_flag_ + " --wait once they are gone";
      throw CommandError(message);
    }
  }
}

void DeleteOptions::run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport) {
  NamespaceLock lock(client, printer, namespace_flag_, "delete", lock_wait_, dry_run_ == DryRun::None);
  printer.always_list();  // -o json|yaml: what was deleted, however many
  Deleted done;
  try {
    done = run_once(client, printer, new_transport, lock);
  } catch (const PlanAgain&) {
    done = run_once(client, printer, new_transport, lock);  // another command held the lock since the plan: again
  }
  // The lock's Lease goes with the deployment: nothing of it is left (a failure above keeps the Lease and the
  // intent, for the next command to finish the delete).
  lock.done(/*remove=*/true);
  if (done.objects == 0 && !done.config_map) {
    printer.summary("No resources found in " + namespace_flag_ + " namespace.");
    if (const std::string hint = did_you_mean(client, namespace_flag_); !hint.empty()) printer.notice(hint);
  }
}

/// The lock finishes or reverts an interrupted delete through this (cmd/lock.h, register_recovery).
const bool kRecoveryRegistered = register_recovery("delete", &DeleteOptions::recover);

std::string DeleteOptions::recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                   const change::Intent& recorded, const std::string& what) {
  // Nothing deleted yet (every target it named is there, none being deleted): a delete killed before its first
  // delete is dropped, not carried out by whatever command comes next.
  DeleteOptions o(DeleteFlags{}, ns);
  o.complete();
  o.validate();
  std::vector<change::Step> steps;
  for (const auto& t : recorded_targets(client, ns, std::get<change::DeleteIntent>(recorded.change)))
    steps.push_back(o.delete_step(client, t, [](const DeleteTarget&) {}));  // the line returned counts them
  LockFence fence(lock, recorded);
  change::Runner runner(fence, o.wording());
  const change::Recovered recovered = runner.recover(steps, change::Direction::Finish);
  const std::size_t deleted = runner.written().size();
  switch (recovered) {
    case change::Recovered::NothingApplied: return "recovered " + what + ": dropped: nothing of it had been deleted";
    case change::Recovered::AlreadyComplete: return "recovered " + what + ": nothing was left to delete";
    default:
      return "recovered " + what + ": finished, deleted what was left of the deployment (" + std::to_string(deleted) +
             (deleted == 1 ? " object" : " objects") + ")";
  }
}

change::Wording DeleteOptions::wording() const {
  const std::string& ns = namespace_flag_;
  change::Wording w;
  w.change = "delete";
  w.dry_run = dry_run_ != DryRun::None;
  w.recovery = "configmap/" + std::string(baseline::kConfigMapName) +
               " (the record of the deployment) is kept; the "
               "record of this delete stays in lease/" +
               kLockLeaseName +
               ": the next kubectl-mindie command in "
               "namespace " +
               ns +
               " finishes it (a deploy supersedes it); fix the cause above and re-run: kubectl "
               "mindie delete -n " +
               ns;
  return w;
}

DeleteOptions::Deleted DeleteOptions::run_once(kube::Client& client, Printer& printer,
                                               const kube::Informer::TransportFactory& new_transport,
                                               NamespaceLock& lock) {
  const DeletePlan plan = plan_delete(client, namespace_flag_);
  // Recorded before the first delete: a delete stopped half-way is finished by the next command (recover()), one
  // that deleted nothing yet is dropped (what it would delete, all of which is still there).
  const change::Intent intent{plan.intent()};
  // An unfinished change is superseded (a delete removes it all) before anything else, even with nothing to delete;
  // a Lease left with nothing else of the deployment is taken to be deleted with it.
  if (lock.unfinished_change_seen() || (plan.targets.empty() && !plan.config_map && lock.lease_seen()))
    lock.before_write(intent);
  std::size_t deleted = 0;
  const auto print = [this, &printer, &deleted](const DeleteTarget& t) {
    printer.result(t.gvr, t.name, "deleted", dry_run_, t.object);
    ++deleted;
  };
  LockFence fence(lock, intent);
  change::Runner runner(fence, wording());
  std::vector<change::Step> steps;
  for (const auto& t : plan.targets) {
    if (t.kept_reason.empty()) steps.push_back(delete_step(client, t, print));
    else printer.warning(t.gvr.kind_dot_group() + "/" + t.name + " kept: " + t.kept_reason);
  }
  runner.run(steps);
  // The record goes last, after the workload is gone when waiting: a delete that stops early can be re-run.
  if (flags_.wait && dry_run_ == DryRun::None) wait_gone(plan.gone, new_transport, lock);
  if (plan.config_map) {
    const DeleteTarget record = plan.config_map_target();
    runner.run({delete_step(client, record, print)});
  }
  return {deleted, plan.config_map.has_value()};
}

namespace {

/// delete: DeleteOptions, or StormDeleteOptions with --framework aibrix.
class DeleteInvocation : public Invocation {
 public:
  explicit DeleteInvocation(po::options_description& desc) {
    add_delete_flags(desc, flags_);
    add_framework_flags(desc, framework_, "delete");
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    if (use_aibrix(framework_)) {
      StormDeleteOptions o(framework_, flags_, global.kube.namespace_);
      o.complete();
      o.validate();
      Session session(global, std::cerr, kLockRequestBound);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
      return;
    }
    DeleteOptions o(flags_, global.kube.namespace_);
    o.complete();
    o.validate();
    Session session(global, std::cerr, kLockRequestBound);
    o.run(session.client(), printer, [&session] { return session.new_transport(); });
  }

 private:
  DeleteFlags flags_;
  FrameworkFlags framework_;
};

}  // namespace

Command delete_command() {
  return {"delete",
          "Delete what deploy created in a namespace (motor-config last)",
          "kubectl mindie delete -n NS [--wait] [--timeout 10m] [--dry-run=server|client] [flags]",
          "Delete what deploy created in namespace NS: the workload (found by the names recorded in motor-config and\n"
          "by the label app.kubernetes.io/managed-by=kubectl-mindie), the controller's ServiceAccount, Role and\n"
          "RoleBinding, its cluster RBAC when it is this deployment's own, and the motor-config ConfigMap last, so an\n"
          "interrupted delete can be run again. Objects already gone are skipped.",
          "  # Delete the deployment in mindie-demo\n"
          "  kubectl mindie delete -n mindie-demo\n\n"
          "  # Delete and wait until its pods are gone\n"
          "  kubectl mindie delete -n mindie-demo --wait --timeout 5m\n\n"
          "  # Show what would be deleted\n"
          "  kubectl mindie delete -n mindie-demo --dry-run=client\n\n"
          "  # Delete an AIBrix StormService and its Services, and wait for its pods to go\n"
          "  kubectl mindie delete --framework aibrix -n vllm-test --app qwen3-pd --wait\n\n"
          "  # Delete the one StormService kubectl-mindie deployed in vllm-test, if there is one\n"
          "  kubectl mindie delete --framework aibrix -n vllm-test\n",
          DeleteFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<DeleteInvocation>(desc);
          },
          changing_exit_codes("-n not given, a motor-config that kubectl-mindie did not write (nothing is deleted), "
                              "--wait timing out (naming what is left; motor-config is kept), --app naming no "
                              "StormService (unless --ignore-not-found; nothing to delete in the namespace is no "
                              "error)")};
}

}  // namespace mindie::cmd
