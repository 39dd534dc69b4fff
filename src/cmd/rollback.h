// kubectl mindie rollback: back to a revision of the baseline (cmd/revisions.h) through the commands' own guarded
// paths, as `kubectl rollout undo` and `helm rollback` go back: the counts as scale changes them, settings as
// update-config does, anything else as a deploy of the revision's files.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "cmd/revisions.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// rollback's own flags, as given.
struct RollbackFlags {
  std::optional<std::int64_t> to_revision;  ///< --to-revision (default: the revision before the latest)
  std::string dry_run = "none";
  LockFlags lock;              ///< --lock-timeout
  HistoryFlags history;        ///< --history-limit
  bool rollout = false;        ///< --rollout: then rollout restart (cmd/rollout_restart.h), as deploy --rollout
  bool stop_operator = false;  ///< --stop-operator: the --rollout's (rollout::RestartRequest::stop_operator)
  std::string timeout = "0s";  ///< --timeout of the --rollout
};

/// The rollback command, in kubectl's order: complete(), validate(), run().
class RollbackOptions {
 public:
  RollbackOptions(RollbackFlags flags, std::string namespace_flag);
  /// --dry-run's value and the namespace: -n, else `context_namespace`. Throws UsageError.
  void complete(const std::string& context_namespace);
  /// Flag values; no I/O. Throws UsageError.
  void validate() const;
  /// Reads motor-config and the revisions, plans (revision::plan_rollback), then runs ScaleOptions (counts), then
  /// UpdateConfigOptions (settings) or DeployOptions (anything else) with the revision's files written to a private
  /// scratch folder, all under one namespace lock (each recording its own intent in it, and a revision "rollback
  /// to N"); plans again from fresh reads when its take finds the lock was held since its first read.
  /// Under --dry-run=server each of them is previewed by its own server dry run, the one after the scale with the
  /// counts as they are (the scale previewed writes nothing). Then, with --rollout, replaces the instances on an
  /// earlier pod template as rollout restart does (its own lock; watches from `new_transport`). Throws CommandError
  /// (no deployment, an unknown revision, a deploy_mode change: nothing written) and what those commands throw.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  /// One read-plan-write pass of run(), under `lock`.
  void run_once(kube::Client& client, Printer& printer, NamespaceLock& lock);
  /// What follows the counts: update-config (plan.settings) or deploy of `target`'s files, its user_config.json
  /// being `user_config`, written to a private scratch folder; under `lock`.
  void run_files(kube::Client& client, Printer& printer, NamespaceLock& lock, const revision::RollbackPlan& plan,
                 const revision::Revision& target, const std::string& user_config, const HistoryFlags& history);

  RollbackFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
  std::chrono::milliseconds timeout_{0};    ///< --timeout
};

/// The rollback command for the command table (cmd/command.h).
Command rollback_command();

}  // namespace mindie::cmd
