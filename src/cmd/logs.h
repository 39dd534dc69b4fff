// kubectl mindie logs: the logs of every pod of a deployment, a role or an instance, each line prefixed
// [role/instance/pod] and merged as lines come; -f follows and picks up pods that start later
// (cmd/logs_streams.h). Replaces deploy.py's --auto_log_collect.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "kube/pod_log.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// logs' own flags, as given (kubectl logs' names and defaults).
struct LogsFlags {
  std::string role;                   ///< --role
  std::int64_t instance = -1;         ///< --instance (needs --role)
  bool follow = false;                ///< -f/--follow
  std::string since;                  ///< --since, a Go duration
  std::int64_t tail = -1;             ///< --tail (-1: all lines)
  bool previous = false;              ///< -p/--previous
  bool timestamps = false;            ///< --timestamps
  std::int64_t max_log_requests = 5;  ///< --max-log-requests: the most streams -f opens (kubectl's default)
};

/// The logs command, in kubectl's order: complete(), validate(), run().
class LogsOptions {
 public:
  LogsOptions(LogsFlags flags, std::string namespace_flag);
  /// Fixes the namespace (-n, else `context_namespace`) and the PodLogOptions. Throws UsageError for a bad --since.
  void complete(const std::string& context_namespace);
  /// The flags' values; no I/O. Throws UsageError.
  void validate() const;
  /// Reads motor-config and the pods, then prints their logs (one pod after the other), or with -f follows them
  /// until stopped. Throws CommandError (no deployment, no pods, more pods than --max-log-requests with -f, a log
  /// that could not be read), ApiError, TransportError.
  void run(kube::Client& client, const kube::Informer::TransportFactory& new_transport);

 private:
  LogsFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  kube::PodLogOptions options_;
};

/// The roles --role names in namespace `ns`: those of the deployment's pods, sorted (shell completion offers them).
/// Throws CommandError when the namespace holds no deployment, ApiError, TransportError.
std::vector<std::string> deployment_roles(kube::Client& client, const std::string& ns);

/// The logs command for the command table (cmd/command.h).
Command logs_command();

}  // namespace mindie::cmd
