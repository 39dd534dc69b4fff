// kubectl mindie rollout status|restart|resume|abort: how far instances are on their current pod template (watched
// until done, as kubectl rollout status), and bringing them there one at a time (cmd/rollout_restart.h).
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "cmd/output_flags.h"
#include "kube/watch.h"
#include "mindie/rollout_plan.h"

namespace mindie::cmd {

/// rollout's argument and flags, as given.
struct RolloutFlags {
  std::string action;              ///< the argument: status, restart, resume or abort
  bool watch = true;               ///< -w/--watch (kubectl rollout status's default: true)
  std::string timeout = "0s";      ///< --timeout, a Go duration; 0 waits for ever
  std::vector<std::string> roles;  ///< restart: --role, repeated
  bool all = false;                ///< restart: --all
  bool surge = false;              ///< restart: --surge (the default)
  bool no_surge = false;           ///< restart, resume: --no-surge
  bool allow_downtime = false;     ///< restart, resume: --allow-downtime
  bool stop_operator = false;      ///< restart, resume: --stop-operator
  int max_unavailable = 1;         ///< restart: --max-unavailable
  LockFlags lock;                  ///< restart, resume, abort: --lock-timeout
  OutputFlags output{{"json", "yaml"}, "Output format", " (the rollout status document, on each change)"};  ///< -o
};

/// Binds RolloutFlags' flags to `desc` (the action is the command's argument).
void add_rollout_flags(boost::program_options::options_description& desc, RolloutFlags& flags);

/// The rollout command, in kubectl's order: complete(), validate(), run().
class RolloutOptions {
 public:
  RolloutOptions(RolloutFlags flags, std::string namespace_flag);
  /// Fixes the namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// The action, -n's syntax, --timeout (kept for run()), the flags each action takes, and -o; no I/O. Throws
  /// UsageError.
  void validate();
  /// status: prints the rollout (mindie::rollout::RolloutStatus) and, with --watch, again on each change until it is
  /// done ("SUBJECT successfully rolled out"). Throws CommandError when --timeout passes first, ApiError /
  /// TransportError when the cluster cannot be read.
  /// restart, resume (the rollout the lock records, with --no-surge/--allow-downtime as given) and abort (takes back
  /// what an interrupted rollout changed for the while, and forgets it): RolloutRestart, settle_rollout.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  void run_status(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);
  void run_abort(kube::Client& client, Printer& printer);
  /// What restart asks for, or resume continues (throws CommandError when no rollout is recorded).
  rollout::RestartRequest request(kube::Client& client) const;
  RolloutFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  std::chrono::milliseconds timeout_{0};
  std::chrono::milliseconds lock_wait_{0};
};

/// The rollout command for the command table (cmd/command.h).
Command rollout_command();

}  // namespace mindie::cmd
