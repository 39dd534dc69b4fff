// kubectl mindie scale: change only instance counts (prefill/decode, or a PD-hybrid union role), by JSON Patch of
// the live InferServiceSet's role replicas (guarded by test ops) and a resourceVersion-guarded update of the
// baseline; undone if the second write fails.
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <optional>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "cmd/multi_deployment.h"
#include "cmd/output_flags.h"
#include "cmd/revisions.h"
#include "cmd/wait.h"
#include "mindie/baseline.h"
#include "mindie/config.h"
#include "mindie/scale_plan.h"

namespace mindie::cmd {

/// scale's own flags, as given.
struct ScaleFlags {
  std::optional<int> prefill;  ///< --prefill: prefill instances
  std::optional<int> decode;   ///< --decode: decode instances
  std::optional<int> hybrid;   ///< --hybrid: PD-hybrid union role instances
  std::optional<int> encode;   ///< --encode: encode instances (multi_deployment with e_instances_num)
  std::string filename;        ///< -f: a user_config.json that differs from the baseline only in instance counts
  std::string dry_run = "none";
  /// --operator-restarted: infer-operator restarted after the pods of a gang role's removed instances were gone, so
  /// it holds no fault record that would rebuild them in a loop (cmd/gang_instances.h).
  bool operator_restarted = false;
  bool skip_node_check = false;  ///< --skip-node-check: no NPU preflight of the added instances
  OutputFlags output{{"json", "yaml", "name"}, "Print the scaled InferServiceSet"};  ///< -o
  LockFlags lock;                                                                    ///< --lock-timeout
  WaitAfterFlags wait;                                                               ///< --wait, --timeout
  HistoryFlags history;                                                              ///< --history-limit
};

/// The instance counts scale sets: prefill and decode, or with PD-hybrid the union role's (then prefill and decode
/// are 0; config::UserConfig::hybrid()); and encode instances (config::UserConfig::encode).
using InstanceCounts = change::RoleCounts;

/// One engine Deployment a multi_deployment scale creates or deletes.
struct EngineChange {
  std::string name;
  bool create = true;  ///< else delete
  std::string uid;     ///< a delete's: of the Deployment as listed
};

/// The instance counts of `c`.
change::RoleCounts counts_of(const config::UserConfig& c);

/// Binds ScaleFlags to `desc`.
void add_scale_flags(boost::program_options::options_description& desc, ScaleFlags& flags);

/// The scale command, in kubectl's order: complete(), validate(), run().
class ScaleOptions {
 public:
  ScaleOptions(ScaleFlags flags, std::string namespace_flag);
  /// --dry-run's value and the namespace: -n, else `context_namespace` (-f's job_id replaces it in run()).
  /// Throws UsageError.
  void complete(const std::string& context_namespace);
  /// Flag combinations and ranges; no I/O. Throws UsageError.
  void validate() const;
  /// Reads -f (if given) before any request, then the baseline and the live object, then patches. In the usual
  /// case 4 requests, the revision step's 2 (cmd/revisions.h: a LIST and the create) and the namespace lock's 3
  /// (read, take with the intent, free), plus one DELETE per removed
  /// instance of a gang-scheduled role (its Volcano PodGroup); more when it waits, plans again, recovers an
  /// interrupted change or reads back a write whose answer was lost. Interrupted at the next write by a signal
  /// (the step under way undone). Throws
  /// CommandError / validation::ValidationError / UsageError (a bad -f; nothing sent), ApiError, TransportError,
  /// CommandError, baseline::BaselineError (an unusable stored baseline) or PartialFailure (with the state and the
  /// recovery command when an undo failed too).
  /// Takes the namespace lock (NamespaceLock) before its first write, unless a dry run, and plans again from fresh
  /// reads when another command held it since the first read.
  void run(kube::Client& client, Printer& printer);
  /// run()'s read-plan-write pass under `lock`, which the caller constructed before its own first read, and frees
  /// (rollback: one lock for all its commands). Throws as run() does, and PlanAgain when the take found the lock
  /// held since `lock`'s first read (the caller reads and plans again).
  void run_under(kube::Client& client, Printer& printer, NamespaceLock& lock);
  /// The namespace scaled; valid after run().
  const std::string& target_namespace() const { return namespace_; }

  /// Finishes or reverts a scale that `intent` (its NamespaceLock intent: mode, roles, from/to counts and the
  /// baseline's resourceVersion when it was read) records as begun and never ended; `lock` is held. Finishes it
  /// when the baseline says the target already, or has not moved since and something of the scale was applied;
  /// reverts the live roles to the baseline when the baseline moved since; drops it when nothing was applied.
  /// `what` names the scale ("an interrupted scale from 14:02 UTC (...)"). Returns the line to print. Throws as run().
  static std::string recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                             const change::Intent& intent, const std::string& what);

 private:
  /// Reads and validates -f when given and takes the namespace from its job_id (checked against -n). Throws
  /// CommandError / validation::ValidationError / UsageError.
  void read_proposed();
  /// The baseline text with the target counts: -f's bytes (after checking that only counts differ from
  /// `baseline`), or `baseline.raw` with the two numbers replaced in place. Throws CommandError.
  std::string new_baseline_text(const config::UserConfig& baseline, const InstanceCounts& target) const;
  /// Writes the new baseline under a resourceVersion precondition. On 409 Conflict it re-reads the ConfigMap,
  /// re-checks the intent against the fresh baseline (counts unchanged by anyone else, -f still differing only in
  /// counts) and tries again, a bounded number of times: never a blind overwrite. Throws ApiError/CommandError.
  /// Returns the ConfigMap as written (or as found, when it already held the target).
  boost::json::object write_baseline(kube::Client& client, boost::json::object cm, const config::UserConfig& read,
                                     const InstanceCounts& target, const kube::WriteOptions& opts) const;

  /// scale of a multi_deployment deployment: creates (server-side apply, rendered from the baseline and its stored
  /// overrides) or deletes (highest indices first) engine Deployments by name, then writes the baseline; undoes the
  /// Deployment changes when the baseline write fails, or prints the recovery command when the undo fails too.
  void run_multi(kube::Client& client, Printer& printer, const boost::json::object& cm,
                 const baseline::Baseline& stored, const InstanceCounts& target);

  /// One read-plan-write pass of run(): reads the baseline, checks, and scales by deploy mode.
  void run_once(kube::Client& client, Printer& printer);
  /// Refuses what the stored deployment cannot scale to (single_container, a mode this version does not know, PD-
  /// hybrid against prefill/decode flags, encode instances it has not). No I/O. Throws CommandError.
  void check_scalable(const baseline::Baseline& stored) const;
  /// Refuses, before any write, the pods `after` adds to `before` (workload objects, as node_fit::npu_demands reads
  /// them) when they do not fit the NPUs free on the nodes (cmd/npu_preflight.h); unless --skip-node-check.
  void check_added_npus(kube::Client& client, Printer& printer, const std::vector<boost::json::object>& before,
                        const std::vector<boost::json::object>& after) const;
  /// The counts asked for: -f's, or the flags' over the baseline's.
  InstanceCounts target_counts(const config::UserConfig& base) const;
  /// scale of an infer_service_set deployment: the InferServiceSet's role replicas (JSON Patch with test ops), then
  /// the baseline, then the PodGroups of removed gang instances; prints the results.
  void run_service_set(kube::Client& client, Printer& printer, const boost::json::object& cm,
                       const baseline::Baseline& stored, const InstanceCounts& target);
  /// After a scale of `iss` by `changes` is recorded: what infer-operator remembers of gang instances, and the
  /// PodGroups of removed ones deleted. Returns the PodGroups deleted.
  std::vector<std::string> finish_gang_scale(kube::Client& client, Printer& printer, const boost::json::object& iss,
                                             const std::vector<scale::RoleChange>& changes,
                                             const InstanceCounts& target, const kube::WriteOptions& opts) const;
  /// The engine Deployments to create (missing indices below the target) and delete (the highest first) so that
  /// each role of `targets` runs its count; warns of roles that drifted from `base`.
  std::vector<EngineChange> plan_engine_changes(const std::vector<WorkloadDeployment>& live,
                                                const std::vector<std::pair<std::string, int>>& targets,
                                                const config::UserConfig& base, Printer& printer) const;
  /// lock_->before_write(intent_): the first takes the namespace lock (may throw PlanAgain) and records the intent,
  /// later ones renew it.
  void before_write() const { lock_->before_write(change::Intent{intent_}); }
  /// Records in intent_ what the scale is about to change: `roles` from the baseline's counts to `target`.
  /// `live`: each role's live count as read (replicas, or engine Deployments).
  void plan_intent(const std::string& mode, const std::string& workload, const std::vector<std::string>& roles,
                   const config::UserConfig& base, const InstanceCounts& target, const boost::json::object& cm,
                   const std::map<std::string, int>& live);
  /// True when the stored baseline says `target` (a write whose reply was lost was applied), then the ConfigMap read
  /// is put in `read` (when given). One GET; throws.
  bool baseline_says(kube::Client& client, const InstanceCounts& target, boost::json::object* read = nullptr) const;
  /// The baseline's write as a change step (write_baseline; read back with baseline_says; undone with the others).
  /// `after` receives the ConfigMap as written.
  change::Step baseline_step(kube::Client& client, const boost::json::object& cm, const config::UserConfig& read,
                             const InstanceCounts& target, const kube::WriteOptions& opts,
                             boost::json::object& after) const;
  /// The JSON Patch of `iss`'s role replicas as a change step; `result` receives the patched object.
  change::Step service_set_step(kube::Client& client, const boost::json::object& iss,
                                const std::vector<scale::RoleChange>& changes, const kube::WriteOptions& opts,
                                boost::json::object& result) const;
  /// The create (server-side apply of `rendered`; undo: delete it by uid) or delete (uid precondition; undo: apply
  /// `rendered`) of an engine Deployment as a change step; a create's answer is appended to `results`.
  change::Step engine_step(kube::Client& client, const EngineChange& c, const boost::json::object& rendered,
                           const kube::WriteOptions& opts, std::vector<boost::json::object>& results) const;
  /// How a failed scale from `base` to `target` is reported; `observed` reads what the workload runs now.
  change::Wording wording(const config::UserConfig& base, const InstanceCounts& target,
                          std::function<std::string()> observed) const;

  ScaleFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
  NamespaceLock* lock_ = nullptr;           ///< during run()
  change::ScaleIntent intent_;              ///< what this pass changes (plan_intent)
  /// Who the revision it records names: this process, or the author of the scale a recovery completes.
  std::optional<revision::Author> author_;
  std::optional<config::UserConfig> proposed_;  ///< from -f
};

/// The scale command for the command table (cmd/command.h).
Command scale_command();

}  // namespace mindie::cmd
