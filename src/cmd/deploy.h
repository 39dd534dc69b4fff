// kubectl mindie deploy: validate user_config.json (+ env.json), render the objects, write the motor-config
// baseline, then the workload, all by server-side apply.
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "mindie/config.h"
#include "mindie/render.h"

namespace mindie::cmd {

/// deploy's own flags, as given.
struct DeployFlags {
  std::string filename;     ///< -f: user_config.json
  std::string env_file;     ///< -e: env.json
  std::string config_dir;   ///< --config-dir: a folder holding user_config.json and (optionally) env.json
  std::string scripts_dir;  ///< --scripts-dir: startup/probe files to store in motor-config
  std::string name;         ///< --name: InferServiceSet name
  std::string dry_run = "none";
  std::string output;       ///< -o
  std::string output_dir;   ///< --output-dir: also write the rendered objects there
  bool force_conflicts = false;
};

/// Binds DeployFlags to `desc`.
void add_deploy_flags(boost::program_options::options_description& desc, DeployFlags& flags);

/// The deploy command: complete() reads and validates inputs (local files only), validate() checks flag
/// combinations (no I/O), run() talks to the API server (or, under --dry-run=client, only prints).
class DeployOptions {
 public:
  DeployOptions(DeployFlags flags, std::string namespace_flag);
  /// Reads the config files and the scripts folder, parses and validates the config and renders the objects.
  /// Throws CommandError / config::ValidationError / UsageError.
  void complete();
  /// Flag combinations; no I/O. Throws UsageError.
  void validate() const;
  /// True unless --dry-run=client.
  bool needs_server() const { return dry_run_ != DryRun::Client; }
  /// Writes (or prints) the objects. Throws ApiError, TransportError, CommandError or PartialFailure.
  void run(kube::Client& client, Printer& printer);

 private:
  void check_existing_baseline(kube::Client& client) const;
  void write_output_dir() const;
  /// The command line that re-runs this deploy (printed when it stops half-way).
  std::string rerun_command() const;

  DeployFlags flags_;
  std::string namespace_flag_;
  DryRun dry_run_ = DryRun::None;
  std::optional<config::UserConfig> config_;
  std::optional<config::EnvConfig> env_;
  render::RenderOptions render_options_;
  std::vector<boost::json::object> objects_;
};

}  // namespace mindie::cmd
