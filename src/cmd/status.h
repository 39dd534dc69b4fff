// kubectl mindie status: reads what status::build_report needs (src/mindie/status_report.h) and prints its views
// (src/mindie/status_view.h). One GET or LIST per kind (baseline ConfigMap, InferServiceSet, InferServices,
// InstanceSets, the instances' workloads, pods, and warning events only when a pod is unhealthy or missing), never a
// request per pod. --watch keeps the view current through the watch API.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/output_flags.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// status's own flags, as given.
struct StatusFlags {
  /// -o; "" is the tree; name: the baseline and the workload objects
  OutputFlags output{{"wide", "json", "yaml", "name"}, "Output format", " (default: a tree)"};
  bool watch = false;           ///< -w/--watch
  bool all_namespaces = false;  ///< -A: list's alias (cmd/list.h)
};

/// Binds StatusFlags to `desc`.
void add_status_flags(boost::program_options::options_description& desc, StatusFlags& flags);

/// The status command, in kubectl's order: complete(), validate(), run().
class StatusOptions {
 public:
  StatusOptions(StatusFlags flags, std::string namespace_flag);
  /// Fixes the namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// -n's syntax and the -o value; no I/O. Throws UsageError.
  void validate() const;
  /// Prints the view (or the report as JSON/YAML). Exits normally when the query worked, drift or not. With
  /// --watch, keeps printing until interrupted (`new_transport` gives each watch its own connection).
  /// Throws ApiError, TransportError, CommandError (no deployment in the namespace) or baseline::BaselineError
  /// (nothing names the workload).
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  StatusFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
};

/// The status command for the command table (cmd/command.h).
Command status_command();

}  // namespace mindie::cmd
