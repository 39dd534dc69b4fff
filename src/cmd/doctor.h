// kubectl mindie doctor: checks, line by line, what a deploy needs of the cluster (and, given a config, of it):
// ok / warning / failed, each with its fix; exit 0 when nothing failed. Reads only.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/deploy.h"
#include "cmd/doctor_checks.h"
#include "cmd/output_flags.h"

namespace mindie::cmd {

/// doctor's own flags, as given.
struct DoctorFlags {
  std::string filename;     ///< -f: user_config.json to check against the cluster
  std::string env_file;     ///< -e: its env.json
  std::string config_dir;   ///< --config-dir: a folder holding user_config.json and env.json
  bool print_rbac = false;  ///< --print-rbac: print the Role and ClusterRole a deploying user needs, check nothing
  OutputFlags output{{"json", "yaml"}, "Print the report (or --print-rbac's List)"};  ///< -o
};

/// The doctor command, in kubectl's order: complete(), validate(), read_inputs(), run().
class DoctorOptions {
 public:
  DoctorOptions(DoctorFlags flags, std::string namespace_flag);
  /// The namespace: -n, else the config's job_id; -n and job_id must agree. Throws UsageError.
  void complete();
  /// Flag combinations; no I/O. Throws UsageError.
  void validate() const;
  /// Reads and validates the config when one is given, as deploy does. Throws what DeployOptions::read_inputs throws.
  void read_inputs();
  /// --print-rbac: the List; otherwise every check, then CommandError when one failed. A request that fails on the
  /// way is a failed check; no answer from the server at all ends the report there.
  void run(kube::Client& client, Printer& printer);
  /// --print-rbac needs no server.
  bool needs_server() const { return !flags_.print_rbac; }

 private:
  /// Runs every check after the server's.
  std::vector<doctor::Check> checks(kube::Client& client, const doctor::Target& target) const;

  DoctorFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
  std::optional<DeployOptions> deploy_;  ///< with a config: its inputs, as a deploy reads them
};

/// The table entry for doctor.
Command doctor_command();

}  // namespace mindie::cmd
