// kubectl mindie delete: remove exactly what deploy created for one namespace, the motor-config ConfigMap (the
// record of what was deployed) last, so a delete that stops half-way can simply be run again.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/delete_plan.h"
#include "cmd/lock.h"
#include "cmd/output_flags.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// delete's own flags, as given.
struct DeleteFlags {
  std::string dry_run = "none";   ///< --dry-run: none, client (read only, print) or server (dryRun=All)
  bool wait = false;              ///< --wait: return once the workload and its pods are gone
  std::string timeout = "10m";    ///< --timeout of --wait, a Go duration
  bool ignore_not_found = false;  ///< --ignore-not-found: --app naming nothing is "No resources found", exit 0
  OutputFlags output{{"json", "yaml", "name"}, "Output format", " (what was deleted)"};  ///< -o
  LockFlags lock;                                                                        ///< --lock-timeout
};

/// Binds DeleteFlags to `desc`.
void add_delete_flags(boost::program_options::options_description& desc, DeleteFlags& flags);

/// The delete command, in kubectl's order: complete(), validate() (no I/O), run(). It never reads the kubeconfig's
/// namespace, so its flags are checked before the kubeconfig is loaded.
class DeleteOptions {
 public:
  DeleteOptions(DeleteFlags flags, std::string namespace_flag);
  /// --dry-run's value. Throws UsageError.
  void complete();
  /// Flag values and combinations; -n is required (a destructive command never falls back to the kubeconfig's
  /// namespace). No I/O. Throws UsageError.
  void validate();
  /// Plans (plan_delete), deletes each target in order printing "kind.group/name deleted" (kubectl's words, with
  /// " (dry run)" / " (server dry run)"; -o name: the name alone; -o json|yaml: a List of the objects deleted; a
  /// target already gone is skipped silently: delete is idempotent), with --wait waits until every collection of
  /// plan.gone is empty, then deletes motor-config. Prints "No resources found in NS namespace." when there is
  /// nothing (-o json|yaml: an empty List). Throws PartialFailure (what was deleted, that the record is kept, the
  /// command to re-run) when a delete fails after others succeeded, CommandError on a --wait timeout (naming what
  /// is left; motor-config kept), ApiError / TransportError otherwise.
  /// Takes the namespace lock (NamespaceLock) before its first delete, unless a dry run, holds it through --wait
  /// and deletes its Lease with motor-config.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);
  /// Finishes the delete `intent` records (a kLockIntentAnnotation record of "delete" that a command left
  /// unfinished; the caller holds `lock`): its recorded deletes, in order (motor-config last), through
  /// change::Runner::recover, which reads back which were done: none, and the delete is dropped; else the rest are
  /// sent (a delete cannot be reverted), without waiting and without deleting the Lease. Returns the line that says
  /// so ("recovered `what`: finished, ..."). Throws what the deletes throw.
  static std::string recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                             const change::Intent& intent, const std::string& what);

 private:
  /// Deletes one target; false when it was already gone.
  bool remove(kube::Client& client, const DeleteTarget& t) const;
  /// The delete of `t` as a change step; `deleted` is called once it is done, or read back as gone.
  change::Step delete_step(kube::Client& client, const DeleteTarget& t,
                           std::function<void(const DeleteTarget&)> deleted) const;
  /// How the change runner words a failure of this delete.
  change::Wording wording() const;
  /// Waits until every collection of `gone` is empty or the timeout passes. Throws CommandError on timeout.
  void wait_gone(const std::vector<kube::WatchTarget>& gone, const kube::Informer::TransportFactory& new_transport,
                 NamespaceLock& lock) const;
  /// What one pass deleted.
  struct Deleted {
    std::size_t objects = 0;  ///< objects deleted (those already gone not counted)
    bool config_map = false;  ///< motor-config was there (and is deleted now)
  };
  /// One plan-delete pass of run(), its deletes after lock.before_write() with the intent {"workload", "mode"}.
  Deleted run_once(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport,
                   NamespaceLock& lock);

  DeleteFlags flags_;
  std::string namespace_flag_;
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds timeout_{0};
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
};

/// The delete command for the command table (cmd/command.h).
Command delete_command();

}  // namespace mindie::cmd
