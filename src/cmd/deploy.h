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
#include "cmd/deploy_prune.h"
#include "cmd/lock.h"
#include "cmd/output_flags.h"
#include "cmd/revisions.h"
#include "cmd/wait.h"
#include "mindie/config.h"
#include "mindie/env_config.h"
#include "mindie/render.h"
#include "mindie/scale_plan.h"

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
  LockFlags lock;                                                     ///< --lock-timeout
  std::string output_dir;  ///< --output-dir: also write the rendered objects there
  bool force_conflicts = false;
  bool skip_node_check = false;  ///< --skip-node-check: no node preflight (check_nodes)
  bool adopt = false;            ///< --adopt: take over a deployment another tool (deploy.py) made (cmd/adopt.h)
  bool prune = false;            ///< --prune: confirms the instances and Deployments a redeploy removes
  bool rollout = false;          ///< --rollout: then rollout restart (cmd/rollout_restart.h), bounded by --timeout
  bool stop_operator = false;    ///< --stop-operator: the --rollout's (rollout::RestartRequest::stop_operator)
  WaitAfterFlags wait;           ///< --wait, --timeout
  HistoryFlags history;          ///< --history-limit
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
  /// The namespace deployed to (the config's job_id); valid after read_inputs().
  const std::string& target_namespace() const { return config_->job_id; }
  /// The config, and the objects a deploy of it writes; valid after read_inputs() (doctor checks them).
  const config::UserConfig& config() const { return *config_; }
  const std::vector<boost::json::object>& objects() const { return objects_; }
  const render::RenderOptions& render_options() const { return render_options_; }
  /// Reads and validates the files (read_inputs) before any request, then writes (or prints) the objects.
  /// Throws CommandError, validation::ValidationError or UsageError (a bad file or -n; nothing sent), ApiError,
  /// TransportError or PartialFailure.
  /// Takes the namespace lock (NamespaceLock) before its first write, unless a dry run; reads and plans again when
  /// another command held it since the first read.
  void run(kube::Client& client, Printer& printer);
  /// run()'s read-plan-write pass under `lock`, which the caller constructed before its own first read, and frees
  /// (rollback). Throws as run() does, and PlanAgain when the take found the lock held since `lock`'s first read
  /// (the caller plans again with a fresh DeployOptions).
  void run_under(kube::Client& client, Printer& printer, NamespaceLock& lock);
  /// Finishes an interrupted deploy `intent` (the caller holds `lock`): applies the workload from motor-config as it
  /// is now, or drops the intent when its baseline was not written; returns the line saying which.
  static std::string recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                             const change::Intent& intent, const std::string& what);
  /// What a deploy would write and remove, with deploy's reads and checks (prepare()) and nothing written: `diff`.
  /// Needs complete() with --dry-run=server and read_inputs(). Throws as run() does before its first write.
  struct Preview {
    std::optional<boost::json::object> existing;  ///< motor-config as read (nullopt: a first deploy)
    std::vector<boost::json::object> objects;     ///< the objects deploy applies, in its order
    Removals removals;                            ///< what the redeploy removes
    boost::json::object config_doc;               ///< user_config.json as deploy would store it
  };
  Preview preview(kube::Client& client, Printer& printer);
  /// `obj` (one of Preview::objects) as deploy's server-side apply would leave it: the apply sent with dryRun=All.
  boost::json::object dry_run_apply(kube::Client& client, const boost::json::object& obj) const;
  /// Reads the config files and the scripts folder, parses and validates the config, checks -n against its
  /// job_id and renders the objects; once (run() calls it when the caller has not: the Invocation does, before
  /// loading the kubeconfig, so a bad file is reported as such whatever the kubeconfig holds). Local files only.
  /// Throws CommandError / validation::ValidationError / UsageError.
  void read_inputs();

 private:
  /// What run_once() read and decided before its first write.
  struct Prepared {
    std::optional<boost::json::object> existing;  ///< motor-config as read (nullopt: a first deploy)
    std::optional<AdoptionPlan> takeover;         ///< --adopt, or deploy.py's deployment found (refused without it)
    kube::WriteOptions opts;                      ///< dry run, force, field manager of every write
    std::vector<render::NodePortClaim> claims;    ///< nodePorts to claim before the first write (node_port_claims.h)
    Removals removals;                            ///< what a redeploy removes: refused unless --prune
  };

  /// One read-plan-write pass of run(): prepare(), write_objects(), finish().
  void run_once(kube::Client& client, Printer& printer, NamespaceLock& lock);
  /// --dry-run=client: warns what it cannot check offline and prints the objects.
  void print_client_dry_run(Printer& printer) const;
  /// The reads and checks before the first write (deploy_checks.h); throws CommandError with nothing written.
  Prepared prepare(kube::Client& client, Printer& printer);
  /// Records the intent, hands over an adoption's fields, then writes every object through change::Runner.
  void write_objects(kube::Client& client, Printer& printer, NamespaceLock& lock, const Prepared& prepared);
  /// A redeploy that moved its nodePorts: releases the claims of the ports the stored config fixed and this one does
  /// not.
  void release_moved_claims(kube::Client& client, const Prepared& prepared) const;
  /// --adopt: hands deploy.py's field ownership over; re-reads motor-config into `baseline_read`, re-plans `intent`.
  void hand_over(kube::Client& client, Printer& printer, NamespaceLock& lock, const Prepared& prepared,
                 std::optional<boost::json::object>& baseline_read, change::Intent& intent,
                 std::vector<std::string>& handed_over) const;
  /// After every object is written: gang records, stale PodGroups, adoption leftovers, objects no longer rendered.
  void finish(kube::Client& client, Printer& printer, const Prepared& prepared) const;
  /// Confirms the lock is still this command's before a clean-up delete after the last step. Throws LockLost.
  void confirm_lock() const;
  /// Deletes deploy.py's objects that an adoption replaced under other names.
  void remove_replaced(kube::Client& client, Printer& printer, const Prepared& prepared) const;
  /// multi_deployment, single_container: deletes our workload objects the baseline no longer renders.
  void remove_stale(kube::Client& client, Printer& printer, const Prepared& prepared) const;

  /// Refuses a change of deploy_mode or workload name; warns where the new config differs from the stored one.
  void check_existing_baseline(const baseline::Baseline& existing, Printer& printer) const;
  /// Keeps the stored env.json, overrides and scripts a redeploy does not pass again; re-renders when it keeps any.
  void keep_stored_files(const baseline::Baseline& existing);
  /// What infer-operator would refuse or never carry out (deploy_checks.h); records the gang roles it changes;
  /// returns the nodePorts the deployment's Services will hold.
  std::vector<render::NodePortClaim> check_operator_rules(kube::Client& client, Printer& printer, bool redeploy);
  /// deploy.py's deployment in the namespace: refused unless --adopt, else what adoption takes over. Reads only.
  std::optional<AdoptionPlan> plan_takeover(kube::Client& client,
                                            const std::optional<boost::json::object>& existing) const;
  /// Script keys the config's pods run that the ConfigMap would lack.
  std::vector<std::string> missing_scripts() const;
  /// Server-side apply of `obj`, taking back fields of our own earlier patches only while the lock is ours.
  boost::json::object apply_object(kube::Client& client, const boost::json::object& obj,
                                   const kube::WriteOptions& opts) const;
  /// --output-dir: the objects as YAML files grouped as deploy.py wrote them.
  void write_output_dir() const;
  /// Renders objects_ from config_, env_ and render_options_ for the config's deploy_mode.
  void render_objects();
  /// The command line that re-runs this deploy (printed when it stops half-way).
  std::string rerun_command() const;

  /// recover(): the inputs of a deploy of what motor-config `stored` holds; renders objects_.
  void read_baseline_inputs(const baseline::Baseline& stored);
  /// recover(): the nodePorts the baseline in `cm` claims, as a deploy of it renders them; nullopt when it no
  /// longer renders.
  static std::optional<std::vector<render::NodePortClaim>> baseline_claims(const boost::json::object& cm,
                                                                           const std::string& ns);
  /// The intent recorded in the Lease before the first write (a change::DeployIntent).
  change::Intent plan_intent(const std::optional<boost::json::object>& existing) const;
  /// Server-side apply of motor-config guarded by the resourceVersion of `existing`; a conflict is read back.
  boost::json::object apply_baseline(kube::Client& client, const boost::json::object& obj,
                                     const std::optional<boost::json::object>& existing,
                                     const kube::WriteOptions& opts) const;
  /// Whether motor-config now holds what this deploy writes and is not `read`; nullopt when unreadable. One GET.
  std::optional<bool> baseline_written(kube::Client& client, const std::optional<boost::json::object>& read) const;
  /// The keys of the motor-config this deploy writes, sorted.
  std::vector<std::string> baseline_keys() const;
  /// The server-side apply of `obj` as a change step, printed once written; no undo: deploy goes only forward.
  /// motor-config's step puts the object as written in `written_baseline`.
  change::Step object_step(kube::Client& client, const boost::json::object& obj,
                           const std::optional<boost::json::object>& baseline_read, const kube::WriteOptions& opts,
                           Printer& printer, boost::json::object& written_baseline) const;
  /// How a failed deploy is reported (`dry_run`: a server dry run).
  change::Wording wording(bool dry_run) const;

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
  /// Running instances per role that keep an earlier pod template (GangChanges::earlier_templates), said after the
  /// writes.
  std::map<std::string, std::size_t> earlier_templates_;
  /// recover(): the interrupted intent this deploy puts right, recorded under "supersedes" in its own.
  std::optional<boost::json::object> superseded_intent_;
  /// Who the revision it records names: this process, or the author of the deploy a recovery completes.
  std::optional<revision::Author> revision_author_;
  /// The namespace lock during run_once() (null in a client dry run): confirmed before fields are forced back.
  NamespaceLock* lock_ = nullptr;
};

/// The deploy command for the command table (cmd/command.h).
Command deploy_command();

}  // namespace mindie::cmd
