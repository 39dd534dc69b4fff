// --framework aibrix: deploy, scale, status and delete of an AIBrix StormService (orchestration.aibrix.ai/v1alpha1)
// and the per-replica Services its routing proxy addresses, with the same conventions as the MindIE commands
// (validation before any request, writes as steps of the change engine under the namespace lock, -o json|yaml|name).
// The objects and the status report come from src/aibrix; the commands live in storm_{deploy,scale,status,delete}.cpp.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "change/runner.h"
#include "cmd/common.h"
#include "cmd/delete.h"
#include "cmd/deploy.h"
#include "cmd/scale.h"
#include "cmd/status.h"
#include "kube/watch.h"

namespace mindie::aibrix {
struct ScalePlan;
}

namespace mindie::cmd {

/// The StormService resource (orchestration.aibrix.ai/v1alpha1, namespaced).
extern const kube::GVR kStormServices;

/// --framework and the flags only the AIBrix path has, as given.
struct FrameworkFlags {
  std::string framework = "mindie";  ///< --framework: mindie (default) or aibrix
  std::string app;                   ///< --app: the StormService name (scale, status, delete)
  std::string role;                  ///< --role: prefill, decode or routing (scale)
  std::optional<int> replicas;       ///< --replicas: the role's new replica count (scale)
  bool allow_restart = false;        ///< --allow-restart: scale even when AIBrix recreates running pods (scale)
};

/// Binds --framework to `desc` for deploy, scale, status and delete, plus --app (scale, status, delete) and
/// --role/--replicas (scale). Other commands get nothing.
void add_framework_flags(boost::program_options::options_description& desc, FrameworkFlags& flags,
                         const std::string& command);

/// True for --framework aibrix, false for mindie. Throws UsageError for any other value, and when an AIBrix-only
/// flag (--app, --role, --replicas) is given without --framework aibrix (it would otherwise be ignored).
bool use_aibrix(const FrameworkFlags& flags);

/// deploy --framework aibrix: applies the StormService of -f stormservice.yaml (ab::parse_storm_config), then its
/// per-replica Services, pruning those of the app it no longer renders.
class StormDeployOptions {
 public:
  /// `namespace_flag` is the -n value as given ("" = not given).
  StormDeployOptions(DeployFlags flags, std::string namespace_flag);
  /// --dry-run's value. Throws UsageError.
  void complete();
  /// Flags; no I/O. The MindIE-only flags (-e, --config-dir, --scripts-dir, --name, --overrides, --output-dir) are
  /// UsageErrors. Throws UsageError.
  void validate();
  /// True unless --dry-run=client; valid after complete().
  bool needs_server() const { return dry_run_ != DryRun::Client; }
  /// Reads and validates -f (read_inputs) before any request, then applies (or, under --dry-run=client, only
  /// prints) the objects; with --wait, waits through watches on connections from `new_transport` until the
  /// StormService is ready. Throws CommandError, validation::ValidationError or UsageError (a bad file or -n; nothing
  /// sent), ApiError, TransportError, CommandError (no StormService CRD, a --wait timeout) or PartialFailure (the
  /// runner's: what was written before a write failed, and the command to re-run).
  /// Unless a dry run, holds the namespace lock (NamespaceLock, taken before its reads) until its last write,
  /// not through the wait.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);
  /// Reads and validates -f, checks -n against its app_namespace and renders the objects; once (run() calls it
  /// when the caller has not: the Invocation does, before loading the kubeconfig). Throws CommandError,
  /// validation::ValidationError or UsageError.
  void read_inputs();

 private:
  DeployFlags flags_;
  std::string namespace_flag_;
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds timeout_{0};
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
  std::string app_;
  std::string app_namespace_;
  std::vector<boost::json::object> objects_;  ///< the StormService, then its Services
  bool inputs_read_ = false;
};

/// scale --framework aibrix [--app NAME] --role ROLE --replicas N [--allow-restart]: a JSON Patch of the role's
/// replicas guarded by test ops (ab::plan_scale), re-planned when the object changed meanwhile, then the Services the
/// new count needs. Without --app, the one StormService kubectl-mindie deployed in the namespace (several: refused,
/// naming them). A patch that changes pod templates (AIBrix then recreates those roles' running pods) is refused,
/// naming the roles, unless --allow-restart.
class StormScaleOptions {
 public:
  StormScaleOptions(FrameworkFlags framework, ScaleFlags flags, std::string namespace_flag);
  /// Fixes the namespace (-n, else `context_namespace`) and --dry-run's value. Throws UsageError.
  void complete(const std::string& context_namespace);
  /// --app (optional), --role, --replicas (1..ab::kMaxRoleReplicas) and the other flags; --prefill, --decode and -f are
  /// UsageErrors, as is --dry-run=client (the patch needs the live object). No I/O. Throws UsageError.
  void validate();
  /// Patches and applies; with --wait, waits as StormDeployOptions::run does. Throws ApiError, TransportError,
  /// CommandError (no CRD, no StormService or several without --app, an unscalable object, pods recreated without
  /// --allow-restart, an object that kept changing, a --wait timeout) or PartialFailure
  /// (the runner's: the scale applied, its Services not all).
  /// Unless a dry run, holds the namespace lock (NamespaceLock, taken before its reads) until its last write,
  /// not through the wait.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  /// Reads the StormService, plans and runs the guarded patch (scale_step); re-reads and re-plans when a test op
  /// failed (422), at most kBaselineWriteAttempts times. Returns the plan that was applied (or needed no patch).
  aibrix::ScalePlan patch_replicas(kube::Client& client, Printer& printer, change::Runner& runner);
  /// Whether the scale of the live `storm` deletes Services of the app (those its plan no longer wants): one LIST.
  bool prunes(kube::Client& client, const boost::json::object& storm) const;
  /// The guarded JSON Patch of `plan`, read back by the role's replicas when its answer was lost (no answer, a 5xx).
  change::Step scale_step(kube::Client& client, Printer& printer, const aibrix::ScalePlan& plan) const;

  FrameworkFlags framework_;
  ScaleFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds timeout_{0};
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
};

/// status --framework aibrix [--app NAME]: the StormService report (ab::build_storm_status) of --app, or of the
/// one StormService kubectl-mindie deployed in the namespace.
class StormStatusOptions {
 public:
  StormStatusOptions(FrameworkFlags framework, StatusFlags flags, std::string namespace_flag);
  /// Fixes the namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// --app when given, -o (wide, json, yaml or name), --watch refused. No I/O. Throws UsageError.
  void validate() const;
  /// Reads the StormService, its pods, Services and pod events (one request each) and prints the report.
  /// Throws ApiError, TransportError or CommandError (no CRD; no, or several, StormServices to show).
  void run(kube::Client& client, Printer& printer);

 private:
  FrameworkFlags framework_;
  StatusFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
};

/// delete --framework aibrix -n NS [--app NAME]: the StormService (its pods go with it), then its Services. Without
/// --app the one kubectl-mindie deployed in NS; as kubectl delete, a named one that does not exist is an error (unless
/// --ignore-not-found), a namespace holding none is "No resources found".
class StormDeleteOptions {
 public:
  StormDeleteOptions(FrameworkFlags framework, DeleteFlags flags, std::string namespace_flag);
  /// --dry-run's value. Throws UsageError.
  void complete();
  /// --app (optional), -n required (never the kubeconfig's namespace), -o, --wait, --timeout. No I/O. Throws
  /// UsageError.
  void validate();
  /// Deletes (under --dry-run=client only prints) and with --wait waits, through watches on connections from
  /// `new_transport`, until the StormService and its pods are gone. Throws ApiError, TransportError, CommandError
  /// (no CRD, nothing to delete, a --wait timeout) or PartialFailure (the runner's: a delete failed after others).
  /// Unless a dry run, holds the namespace lock (NamespaceLock, taken before its reads) until its last write,
  /// not through the wait.
  void run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport);

 private:
  /// --wait: until the StormService and its pods are gone, or --timeout (CommandError naming what is left).
  void wait_gone(Printer& printer, const kube::Informer::TransportFactory& new_transport) const;

  FrameworkFlags framework_;
  DeleteFlags flags_;
  std::string namespace_flag_;
  std::string app_;  ///< the StormService deleted: --app, else the one found
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds timeout_{0};
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
};

}  // namespace mindie::cmd
