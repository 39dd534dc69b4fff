// kubectl mindie deploy: validate user_config.json (+ env.json), render the objects, write the motor-config
// baseline, then the workload, all by server-side apply.
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cmd/adopt.h"
#include "cmd/command.h"
#include "cmd/common.h"
#include "mindie/scale_plan.h"
#include "cmd/lock.h"
#include "cmd/output_flags.h"
#include "cmd/wait.h"
#include "mindie/config.h"
#include "mindie/env_config.h"
#include "mindie/render.h"

namespace mindie::cmd {

/// deploy's own flags, as given.
struct DeployFlags {
  std::string filename;     ///< -f: user_config.json
  std::string env_file;     ///< -e: env.json
  std::string config_dir;   ///< --config-dir: a folder holding user_config.json and (optionally) env.json
  std::string scripts_dir;  ///< --scripts-dir: startup/probe files to store in motor-config
  std::string name;         ///< --name: InferServiceSet name
  std::string overrides;    ///< --overrides: YAML of per-role changes to the pod templates (mindie/overrides.h)
  std::string dry_run = "none";
  OutputFlags output{{"json", "yaml", "name"}, "Print the objects"};  ///< -o
  LockFlags lock;  ///< --lock-timeout
  std::string output_dir;   ///< --output-dir: also write the rendered objects there
  bool force_conflicts = false;
  bool skip_node_check = false;  ///< --skip-node-check: no node preflight (check_nodes)
  bool adopt = false;            ///< --adopt: take over a deployment another tool (deploy.py) made (cmd/adopt.h)
  WaitAfterFlags wait;      ///< --wait, --timeout
};

/// Binds DeployFlags to `desc`.
void add_deploy_flags(boost::program_options::options_description& desc, DeployFlags& flags);

/// The deploy command, in kubectl's order: complete() derives values from the flags, validate() checks flag
/// combinations (no I/O), run() reads and validates the input files, then talks to the API server (or, under
/// --dry-run=client, only prints).
class DeployOptions {
 public:
  DeployOptions(DeployFlags flags, std::string namespace_flag);
  /// --dry-run's value. Throws UsageError.
  void complete();
  /// Flag combinations; no I/O. Throws UsageError.
  void validate() const;
  /// True unless --dry-run=client; valid after complete().
  bool needs_server() const { return dry_run_ != DryRun::Client; }
  /// The namespace deployed to (the config's job_id); valid after run().
  const std::string& target_namespace() const { return config_->job_id; }
  /// Reads and validates the files (read_inputs) before any request, then writes (or prints) the objects.
  /// Throws CommandError, validation::ValidationError or UsageError (a bad file or -n; nothing sent), ApiError,
  /// TransportError or PartialFailure.
  /// Takes the namespace lock (NamespaceLock) before its first write, unless a dry run; reads and plans again when
  /// another command held it since the first read.
  void run(kube::Client& client, Printer& printer);
  /// Finishes the deploy `intent` records (a kLockIntentAnnotation record of "deploy" that a command left
  /// unfinished; the caller holds `lock`): the workload is rendered again from motor-config as it is now (the
  /// user_config.json, env.json, overrides and scripts it stores) and applied, as a deploy of those files would,
  /// so that the workload and the baseline agree. Dropped, with nothing sent, when the baseline was not written
  /// (motor-config's data digest is not the intent's and its resourceVersion is the one read) and the intent does
  /// not stand for an earlier one ("supersedes"). Returns the line that says which ("recovered `what`: ...").
  /// Throws what the writes throw.
  static std::string recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                             const change::Intent& intent, const std::string& what);
  /// Reads the config files and the scripts folder, parses and validates the config, checks -n against its
  /// job_id and renders the objects; once (run() calls it when the caller has not: the Invocation does, before
  /// loading the kubeconfig, so a bad file is reported as such whatever the kubeconfig holds). Local files only.
  /// Throws CommandError / validation::ValidationError / UsageError.
  void read_inputs();

 private:
  /// Refuses a redeploy that would change deploy_mode or the InferServiceSet name recorded in the existing
  /// ConfigMap; warns (via `printer`) about every path at which the new config differs from the stored baseline.
  /// Throws CommandError, baseline::BaselineError (no mode recorded and an unusable baseline).
  void check_existing_baseline(const baseline::Baseline& existing, Printer& printer) const;
  /// Keeps the files a previous deploy stored (env.json, overrides.yaml, scripts) that this deploy does not pass
  /// again, so a redeploy without -e, --overrides or --scripts-dir never deletes them (server-side apply would
  /// drop keys the manager stops sending). Re-renders when anything is kept. Throws CommandError when stored
  /// overrides no longer validate.
  void keep_stored_files(const baseline::Baseline& existing);
  /// Before any write, what infer-operator would refuse or never carry out (shared/docs/infer-operator-rules.md):
  /// a nodePort another Service holds (one cluster-wide Service LIST; forbidden = a warning), gang-scheduled roles
  /// without Volcano's PodGroup API (A3), and on a redeploy (`redeploy`) a change of what the live InstanceSets fixed
  /// at creation (D3). Warns how many live instances keep an earlier pod template. Throws CommandError.
  /// Records in gang_scale_in_ the gang roles this redeploy scales in, and in gang_changes_ every gang role whose
  /// count it changes; refuses a gang scale-out that would start infer-operator's rebuild loop
  /// (cmd/gang_instances.h).
  void check_operator_rules(kube::Client& client, Printer& printer, bool redeploy);
  /// The node preflight (PyMotor 7d15c04 U3, extended): the engine pods of objects_ must fit the nodes, packed by
  /// node_fit::pack onto the allocatable NPUs of the nodes their nodeSelector matches. One cluster-wide Node LIST;
  /// forbidden (403) is a warning with a hint. Throws CommandError naming each role that does not fit.
  void check_nodes(kube::Client& client, Printer& printer) const;
  /// deploy.py's deployment in the namespace (motor-config without our label, cmd/adopt.h): refused unless
  /// --adopt; with it, what adoption takes over and removes. Reads only. Throws CommandError.
  std::optional<AdoptionPlan> plan_takeover(kube::Client& client, const std::optional<boost::json::object>& existing) const;
  /// Script keys the config's pods run (deployer_scripts::needed) that the ConfigMap would lack.
  std::vector<std::string> missing_scripts() const;
  /// Server-side apply of `obj`. A conflict only with our own earlier patches (scale/update-config) is taken
  /// over; any other conflict fails with kubectl's advice (PartialFailure carrying the ApiError).
  boost::json::object apply_object(kube::Client& client, const boost::json::object& obj,
                                   const kube::WriteOptions& opts) const;
  void write_output_dir() const;
  /// Renders objects_ from config_, env_ and render_options_ for the config's deploy_mode.
  void render_objects();
  /// The command line that re-runs this deploy (printed when it stops half-way).
  std::string rerun_command() const;

  /// The inputs of a deploy of what motor-config `stored` holds (for recover()): its config, env.json, overrides,
  /// scripts, SERVICE_ID and workload name; renders objects_. Throws baseline::BaselineError,
  /// validation::ValidationError (a stored file that no longer validates).
  void read_baseline_inputs(const baseline::Baseline& stored);
  /// The intent deploy records before its first write: {"mode", "workload", "baseline_resource_version" (of
  /// `existing`, "" when absent), "baseline_digest" (baseline::data_digest of the motor-config it writes) and
  /// "baseline_keys" (its keys), "adopt", "force_conflicts", "supersedes" (stands_for_, when set), and "roles",
  /// "from", "to" for the instance counts it changes}.
  change::Intent plan_intent(const std::optional<boost::json::object>& existing) const;
  /// Server-side apply of motor-config `obj` guarded by the resourceVersion of `existing` (when there is one), so
  /// that a baseline someone wrote since this deploy read it is never overwritten. A conflict is read back: the
  /// live ConfigMap holding what `obj` holds (a retried apply whose first reply was lost) is this deploy's write;
  /// otherwise throws CommandError saying it was changed meanwhile.
  boost::json::object apply_baseline(kube::Client& client, const boost::json::object& obj,
                                     const std::optional<boost::json::object>& existing,
                                     const kube::WriteOptions& opts) const;
  /// After a failure of the baseline write whose outcome is unknown: true when motor-config holds what this deploy
  /// writes (its keys, baseline_keys()) and is not `read` (the object read before, which may hold the same data);
  /// nullopt when it cannot be read (unknown stays unknown). One GET.
  std::optional<bool> baseline_written(kube::Client& client, const std::optional<boost::json::object>& read) const;
  /// The keys of the motor-config this deploy writes, sorted.
  std::vector<std::string> baseline_keys() const;

  /// One read-plan-write pass of run(), its writes after lock.before_write().
  void run_once(kube::Client& client, Printer& printer, NamespaceLock& lock);

  DeployFlags flags_;
  std::string namespace_flag_;
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
  bool inputs_read_ = false;
  std::optional<config::UserConfig> config_;
  std::optional<config::EnvConfig> env_;
  render::RenderOptions render_options_;
  std::vector<boost::json::object> objects_;
  std::string scripts_notice_;  ///< what --scripts-dir left out (ScriptsDir::left_out_notice), warned in run()
  /// Gang roles whose live InstanceSets have more instances than this deploy renders: role -> instances wanted.
  std::map<std::string, int> gang_scale_in_;
  /// Gang roles whose live instance count this redeploy changes (live -> rendered), recorded after the writes.
  std::vector<scale::RoleChange> gang_changes_;
  /// recover(): the intent this deploy puts right, recorded under "supersedes" in its own.
  std::optional<boost::json::object> stands_for_;
  /// The server-side apply of `obj` (motor-config guarded by `baseline_read`'s resourceVersion) as a change step,
  /// printed once written; no undo: deploy goes only forward.
  change::Step object_step(kube::Client& client, const boost::json::object& obj,
                           const std::optional<boost::json::object>& baseline_read, const kube::WriteOptions& opts,
                           Printer& printer) const;
  /// How a failed deploy is reported (`dry_run`: a server dry run).
  change::Wording wording(bool dry_run) const;
  /// The namespace lock during run_once() (null in a client dry run): confirmed before fields are forced back.
  NamespaceLock* lock_ = nullptr;
};

/// The deploy command for the command table (cmd/command.h).
Command deploy_command();

}  // namespace mindie::cmd
