// kubectl mindie update-config: refresh the motor-config ConfigMap with settings the running service re-reads
// (log levels, timeouts, north config, ...). Instance counts and deploy_mode must equal the baseline.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <optional>
#include <string>

#include "cmd/common.h"
#include "mindie/config.h"

namespace mindie::cmd {

/// update-config's own flags, as given.
struct UpdateConfigFlags {
  std::string filename;    ///< -f: the new user_config.json
  std::string env_file;    ///< -e: the new env.json (replaces the stored one)
  std::string config_dir;  ///< --config-dir: DIR/user_config.json and, when present, DIR/env.json
  std::string dry_run = "none";
};

/// Binds UpdateConfigFlags to `desc`.
void add_update_config_flags(boost::program_options::options_description& desc, UpdateConfigFlags& flags);

/// The update-config command.
class UpdateConfigOptions {
 public:
  UpdateConfigOptions(UpdateConfigFlags flags, std::string namespace_flag);
  /// Flag combinations; no I/O. Throws UsageError.
  void validate() const;
  /// Reads and validates the new files. Throws CommandError / config::ValidationError / UsageError.
  void complete();
  /// Compares with the baseline and, when only whitelisted paths differ, patches the ConfigMap's keys it owns
  /// (user_config.json, env.json) under a resourceVersion precondition, keeping every other key. Two requests.
  /// Throws ApiError, TransportError or CommandError (listing every path that may not change; nothing written).
  void run(kube::Client& client, Printer& printer);

 private:
  /// The ConfigMap keys to write, checked against the baseline in `cm`: deploy_mode and counts unchanged, only
  /// whitelisted paths differ. Empty when nothing changes. Throws CommandError listing every refused path.
  boost::json::object changed_keys(const boost::json::object& cm) const;

  UpdateConfigFlags flags_;
  std::string namespace_flag_;
  DryRun dry_run_ = DryRun::None;
  std::optional<config::UserConfig> proposed_;
  std::optional<config::EnvConfig> env_;
};

}  // namespace mindie::cmd
