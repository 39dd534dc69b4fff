// kubectl mindie status: reads what status::build_report needs (src/mindie/status_report.h) and prints its views
// (src/mindie/status_view.h). One GET or LIST per kind (baseline ConfigMap, InferServiceSet, InferServices,
// InstanceSets, the instances' workloads, pods, and warning events only when a pod is unhealthy or missing), never a
// request per pod. --watch keeps the view current through the watch API.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/output_flags.h"
#include "kube/watch.h"
#include "mindie/status_report.h"

namespace mindie::cmd {

/// status's own flags, as given.
struct StatusFlags {
  /// -o; "" is the tree; name with --framework aibrix only, for now
  OutputFlags output{{"wide", "json", "yaml", "name"}, "Output format", " (default: a tree; name: --framework aibrix)"};
  bool watch = false;  ///< -w/--watch
};

/// Binds StatusFlags to `desc`.
void add_status_flags(boost::program_options::options_description& desc, StatusFlags& flags);

/// multi_deployment: the watch targets keeping StatusInputs current: motor-config, the Deployments and pods of
/// workload `name` (cmd::multi_selector), warning events, the Services (same selector).
std::vector<kube::WatchTarget> multi_status_watch_targets(const std::string& ns, const std::string& name);

/// StatusInputs from an informer started with multi_status_watch_targets.
status::StatusInputs inputs_from_multi_informer(const kube::Informer& informer);

/// Reads StatusInputs for namespace `ns` (multi_deployment: GET motor-config, one LIST each of Deployments, pods
/// and Services by cmd::multi_selector, events on trouble). Otherwise: GET motor-config (CommandError "no
/// deployment found" when absent), GET the InferServiceSet, then when it exists one LIST each of InferServices,
/// InstanceSets, StatefulSets, Deployments, pods and Services, and one LIST of warning events only when some pod is
/// not ready or fewer pods exist than the set asks for (the operator's events then say why). A 403 on listing
/// Services is recorded in services_unknown. Throws ApiError / TransportError /
/// CommandError / baseline::BaselineError (nothing names the workload).
status::StatusInputs read_status_inputs(kube::Client& client, const std::string& ns);

/// The watch targets that keep StatusInputs current for InferServiceSet `name` (with `services` InferServices)
/// in `ns`, in the order StatusInputs lists them: motor-config, the set, InferServices, InstanceSets, pods, events,
/// then StatefulSets and Deployments (the workloads), then Services.
std::vector<kube::WatchTarget> status_watch_targets(const std::string& ns, const std::string& name,
                                                    std::int64_t services);

/// StatusInputs from an informer started with status_watch_targets.
status::StatusInputs inputs_from_informer(const kube::Informer& informer);

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
