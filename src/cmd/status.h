// kubectl mindie status: per role and instance, what the baseline asks for, what the live InferServiceSet says
// and which pods run, with drift spelled out. Three requests: baseline, InferServiceSet, one LIST of pods.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <string>

#include "cmd/common.h"

namespace mindie::cmd {

/// status's own flags, as given.
struct StatusFlags {
  std::string output;  ///< -o: "" (table), json or yaml
};

/// Binds StatusFlags to `desc`.
void add_status_flags(boost::program_options::options_description& desc, StatusFlags& flags);

/// The status command.
class StatusOptions {
 public:
  StatusOptions(StatusFlags flags, std::string namespace_flag);
  /// -o value; no I/O. Throws UsageError.
  void validate() const;
  /// Fixes the namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// Prints the table (or the report as JSON/YAML). Exits normally when the query worked, drift or not.
  /// Throws ApiError, TransportError or CommandError (no deployment in the namespace).
  void run(kube::Client& client, Printer& printer);

 private:
  StatusFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
};

/// Builds the status report from the three objects read (pure, for tests). Shape (stable, for scripts):
/// {namespace, inferServiceSet, deployMode, found (bool: the InferServiceSet exists), baselineUsable (bool: the
///  stored user_config.json parses; when false, baselineInstances are null and drift says why),
///  observedGeneration, generation,
///  roles: [{name, baselineInstances, specInstances (null when the role is not live), podsPerInstance,
///           desiredPods (= specInstances x podsPerInstance), readyPods, pods (existing), restarts,
///           instances: [{index, readyPods, pods: [{name, phase, ready, restarts, node, reason}]}]}],
///  drift: ["role prefill: baseline 3 instances, spec.template.roles[2].replicas 1", ...],
///  unready: ["role prefill instance 1: 0 of 1 pods exist", "pod X (role decode, instance 0) is not ready: ...", ...]}
/// Every instance below specInstances is listed, with its pods or none.
/// `iss` may be null (not found). Pods are grouped by the operator's labels instanceset-name (role) and
/// instanceset-index (instance), never by name prefix (infer-operator behaviour).
boost::json::object build_status_report(const std::string& ns, const boost::json::object& config_map,
                                        const boost::json::object* iss, const boost::json::array& pods);

/// Renders a report from build_status_report as the human table.
std::string render_status_table(const boost::json::object& report);

}  // namespace mindie::cmd
