// kubectl mindie diff: what a deploy of the given config would change, as kubectl diff shows it (a server-side dry
// run of every object deploy writes, a unified diff of each against the live one), then the baseline's changes and
// the command that applies each.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/deploy.h"
#include "cmd/external_diff.h"

namespace mindie::cmd {

/// diff's flags: deploy's inputs.
struct DiffFlags {
  std::string filename;     ///< -f
  std::string env_file;     ///< -e
  std::string config_dir;   ///< --config-dir
  std::string scripts_dir;  ///< --scripts-dir
  std::string overrides;    ///< --overrides
  std::string name;         ///< --name
};

/// The lines of the baseline section: each path where `proposed` differs from `stored` (user_config.json
/// documents), "path: old → new (command)", "(absent)" for a side without it. Empty when none differ.
std::vector<std::string> baseline_change_lines(const boost::json::value& stored, const boost::json::value& proposed);

/// The diff command: complete() → validate() → read_inputs() → run(), deploy's inputs and checks through
/// DeployOptions (preview, dry_run_apply), so diff shows what deploy does.
class DiffOptions {
 public:
  DiffOptions(const DiffFlags& flags, std::string namespace_flag);
  void complete();
  void validate() const;
  /// deploy's read_inputs(): the files, validated; -n against the config's job_id. Local files only.
  void read_inputs();
  /// Shows the differences on printer.out(); returns 0 when there are none, 1 when there are (kubectl diff's
  /// status). Writes nothing: every apply is sent with dryRun=All. Throws as deploy does before its first write.
  int run(kube::Client& client, Printer& printer);

 private:
  /// Each object deploy applies (live, and as the dry-run apply returns it) and each it would delete, as files.
  std::vector<DiffFile> object_files(kube::Client& client, const DeployOptions::Preview& preview);

  DeployOptions deploy_;
  std::string namespace_;  ///< the config's job_id, after read_inputs()
};

/// The diff command for the command table (cmd/command.h).
Command diff_command();

}  // namespace mindie::cmd
