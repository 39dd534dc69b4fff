// kubectl mindie history: the baseline's revisions (cmd/revisions.h) as `kubectl rollout history` and `helm history`
// list theirs, with what each changed; --revision N shows what one holds.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/output_flags.h"

namespace mindie::cmd {

/// history's own flags, as given.
struct HistoryListFlags {
  std::optional<std::int64_t> revision;  ///< --revision: show this one's content
  OutputFlags output{{"json", "yaml"}, "Output format", " (default: a table)"};  ///< -o
};

/// The history command, in kubectl's order: complete(), validate(), run().
class HistoryOptions {
 public:
  HistoryOptions(HistoryListFlags flags, std::string namespace_flag);
  /// The namespace: -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// -n's syntax, --revision >= 1, -o. No I/O. Throws UsageError.
  void validate() const;
  /// One LIST of the revisions (and a GET of motor-config when there are none, for the message). Throws
  /// CommandError (no deployment, no revisions, an unknown revision), ApiError, TransportError.
  void run(kube::Client& client, Printer& printer) const;

 private:
  HistoryListFlags flags_;
  std::string namespace_flag_;
  std::string namespace_;
};

/// The history command for the command table (cmd/command.h).
Command history_command();

}  // namespace mindie::cmd
