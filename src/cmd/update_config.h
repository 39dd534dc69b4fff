// kubectl mindie update-config: refresh the motor-config ConfigMap with settings the running service re-reads
// (log levels, timeouts, north config, ...). Instance counts and deploy_mode must equal the baseline.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <map>
#include <optional>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "cmd/output_flags.h"
#include "cmd/revisions.h"
#include "mindie/baseline.h"
#include "mindie/config.h"
#include "mindie/env_config.h"

namespace mindie::cmd {

/// update-config's own flags, as given.
struct UpdateConfigFlags {
  std::string filename;     ///< -f: the new user_config.json
  std::string env_file;     ///< -e: the new env.json (replaces the stored one)
  std::string config_dir;   ///< --config-dir: DIR/user_config.json and, when present, DIR/env.json
  std::string scripts_dir;  ///< --scripts-dir: replaces the stored startup/probe scripts (read as deploy reads it)
  std::string dry_run = "none";
  LockFlags lock;                                                                               ///< --lock-timeout
  OutputFlags output{{"json", "yaml", "name"}, "Print the motor-config ConfigMap as updated"};  ///< -o
  HistoryFlags history;                                                                         ///< --history-limit
};

/// Binds UpdateConfigFlags to `desc`.
void add_update_config_flags(boost::program_options::options_description& desc, UpdateConfigFlags& flags);

/// The update-config command, in kubectl's order: complete(), validate(), run().
class UpdateConfigOptions {
 public:
  UpdateConfigOptions(UpdateConfigFlags flags, std::string namespace_flag);
  /// --dry-run's value. Throws UsageError.
  void complete();
  /// Flag combinations; no I/O. Throws UsageError.
  void validate() const;
  /// Reads and validates the files (read_inputs) before any request. Then compares with the baseline and, when only
  /// whitelisted paths differ, patches the ConfigMap's keys it owns
  /// (user_config.json, env.json; the set_*_env functions in the stored scripts and env_functions.sh) under a
  /// resourceVersion precondition, keeping every other key as it is in the cluster — unless --scripts-dir was
  /// given: then the script keys become the folder's files (with the functions injected, as deploy stores them)
  /// and stored scripts the folder no longer holds are removed (a merge patch's null); overrides.yaml is never
  /// touched. Two requests, then the revision step's (cmd/revisions.h). Throws UsageError (-n differs from job_id;
  /// nothing sent), ApiError, TransportError, validation::ValidationError or CommandError (a bad file, nothing sent; or
  /// listing every path that may not change, nothing written). Takes the namespace lock (NamespaceLock) before its
  /// write, unless a dry run, and reads again when another command held it since the first read.
  void run(kube::Client& client, Printer& printer);
  /// run()'s read-check-write pass under `lock`, which the caller constructed before its own first read, and frees
  /// (rollback). Throws as run() does, and PlanAgain when the take found the lock held since `lock`'s first read.
  void run_under(kube::Client& client, Printer& printer, NamespaceLock& lock);
  /// Reads and validates the new files and, with --scripts-dir, the scripts folder (ConfigMap keys, UTF-8 text,
  /// the scripts the config's pods run present); once (run() calls it when the caller has not: the Invocation
  /// does, before loading the kubeconfig). Local files only. Throws CommandError / validation::ValidationError /
  /// UsageError.
  void read_inputs();

 private:
  /// The ConfigMap keys to write, checked against the baseline in `cm`: deploy_mode and counts unchanged, only
  /// whitelisted paths differ. Empty when nothing changes. Throws CommandError listing every refused path, or
  /// baseline::BaselineError when the stored baseline is not usable.
  boost::json::object changed_keys(const boost::json::object& cm) const;
  /// Adds to `data` the script keys of --scripts-dir as deploy would store them (render::render_config_map with
  /// the new or stored env.json and motor-config's SERVICE_ID) where they differ from `stored`, and null for every
  /// stored script key the folder no longer holds. Throws validation::ValidationError (the ConfigMap would exceed
  /// 1 MiB) or CommandError (the stored env.json is invalid).
  void script_keys_from_dir(const baseline::Baseline& stored, boost::json::object& data) const;

  /// One read-check-write pass of run().
  void run_once(kube::Client& client, Printer& printer, NamespaceLock& lock);
  /// The merge patch of `cm`'s changed keys under its resourceVersion; on 409 the lock is confirmed ours, the
  /// ConfigMap re-read and the keys re-checked, a bounded number of times. Throws ApiError, LockLost.
  /// Returns the ConfigMap as written.
  boost::json::object write_config(kube::Client& client, boost::json::object cm, const kube::WriteOptions& opts,
                                   NamespaceLock& lock) const;

  UpdateConfigFlags flags_;
  std::string namespace_flag_;
  DryRun dry_run_ = DryRun::None;
  std::chrono::milliseconds lock_wait_{0};  ///< --lock-timeout
  bool inputs_read_ = false;
  std::optional<config::UserConfig> proposed_;
  std::optional<config::EnvConfig> env_;
  /// --scripts-dir's files (key = file name), when given.
  std::optional<std::map<std::string, std::string>> scripts_;
  std::string scripts_notice_;  ///< what --scripts-dir left out (ScriptsDir::left_out_notice), warned in run()
};

/// The update-config command for the command table (cmd/command.h).
Command update_config_command();

}  // namespace mindie::cmd
