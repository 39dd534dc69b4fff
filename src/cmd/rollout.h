// kubectl mindie rollout status: per role, how many instances run the current pod template and are ready, and which
// are still on an earlier one; watches until the rollout is done, as kubectl rollout status does.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/output_flags.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// rollout's argument and flags, as given.
struct RolloutFlags {
  std::string action;          ///< the argument: status
  bool watch = true;           ///< -w/--watch (kubectl rollout status's default: true)
  std::string timeout = "0s";  ///< --timeout, a Go duration; 0 waits for ever
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
  /// The action (status), -n's syntax, --timeout (kept for run()) and -o; no I/O. Throws UsageError.
  void validate();
  /// status: prints the rollout (mindie::rollout::RolloutStatus) and, with --watch, again on each change until it is
  /// done ("SUBJECT successfully rolled out"). Throws CommandError when --timeout passes first, ApiError /
  /// TransportError when the cluster cannot be read.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  RolloutFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  std::chrono::milliseconds timeout_{0};
};

/// The rollout command for the command table (cmd/command.h).
Command rollout_command();

}  // namespace mindie::cmd
