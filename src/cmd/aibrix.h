// --framework aibrix: deploy, scale, status and delete of an AIBrix StormService (orchestration.aibrix.ai/v1alpha1)
// and the per-replica Services its routing proxy addresses, with the same conventions as the MindIE commands
// (validation before any request, server-side apply, guarded JSON Patches, kubectl-style output and errors). The
// objects and the status report come from src/aibrix (parse_storm_config, render_storm_service, plan_scale,
// build_storm_status); this file only talks to the API server.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "cmd/delete.h"
#include "cmd/deploy.h"
#include "cmd/scale.h"
#include "cmd/status.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// The StormService resource (orchestration.aibrix.ai/v1alpha1, namespaced).
extern const kube::GVR kStormServices;

/// --framework and the flags only the AIBrix path has, as given.
struct FrameworkFlags {
  std::string framework = "mindie";  ///< --framework: mindie (default) or aibrix
  std::string app;                   ///< --app: the StormService name (scale, status, delete)
  std::string role;                  ///< --role: prefill, decode or routing (scale)
  std::optional<int> replicas;       ///< --replicas: the role's new replica count (scale)
};

/// Binds --framework to `desc` for deploy, scale, status and delete, plus --app (scale, status, delete) and
/// --role/--replicas (scale). Other commands get nothing.
void add_framework_flags(boost::program_options::options_description& desc, FrameworkFlags& flags,
                         const std::string& command);

/// True for --framework aibrix, false for mindie. Throws UsageError for any other value, and when an AIBrix-only
/// flag (--app, --role, --replicas) is given without --framework aibrix (it would otherwise be ignored).
bool use_aibrix(const FrameworkFlags& flags);

/// Runs `command` (deploy, scale, status or delete) for --framework aibrix: flags and files are validated before
/// the connection is made (from `global`, not at all under deploy --dry-run=client). Output goes to `printer`.
/// Flags of the MindIE path that mean nothing here (-e, --config-dir, --scripts-dir, --name, --overrides,
/// --output-dir, --prefill/--decode/-f on scale, --watch on status) are UsageErrors. Throws what the command
/// throws.
void run_aibrix(const std::string& command, const FrameworkFlags& framework, const DeployFlags& deploy,
                const ScaleFlags& scale, const StatusFlags& status, const DeleteFlags& del,
                const GlobalFlags& global, Printer& printer);

}  // namespace mindie::cmd
