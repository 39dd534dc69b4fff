// kubectl mindie get-config: the deployed (or a past revision's) user_config.json and env.json, so that users edit
// what is deployed (helm's `get values`).
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"

namespace mindie::cmd {

/// get-config's own flags, as given.
struct GetConfigFlags {
  std::optional<std::int64_t> revision;  ///< --revision: a past revision's files (kubectl mindie history)
  std::string output_dir;                ///< -o/--output-dir: write the files there instead of printing
};

/// The get-config command, in kubectl's order: complete(), validate(), run().
class GetConfigOptions {
 public:
  GetConfigOptions(GetConfigFlags flags, std::string namespace_flag);
  /// The namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// -n's syntax, --revision >= 1. No I/O. Throws UsageError.
  void validate() const;
  /// One GET of motor-config (or one LIST of the revisions with --revision), then prints user_config.json to stdout,
  /// or writes user_config.json and env.json (when stored) into --output-dir by write_file_no_follow, each named on
  /// stdout. Throws CommandError (no deployment, an unknown revision: nothing written), ApiError, TransportError.
  void run(kube::Client& client, Printer& printer) const;

 private:
  GetConfigFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
};

/// The get-config command for the command table (cmd/command.h).
Command get_config_command();

}  // namespace mindie::cmd
