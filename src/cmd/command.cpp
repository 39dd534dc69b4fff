// The exit statuses shared by the commands that change a deployment; see command.h.
#include "cmd/command.h"

namespace mindie::cmd {

std::vector<ExitCode> changing_exit_codes(const std::string& errors) {
  return {
      {"0", "success, a dry run included"},
      {"1",
       "an error, printed as error: ... or Error from server (Reason): ...: a bad flag or input file, the "
       "namespace lock held by another command past --lock-timeout or taken over (naming the taker), an API or "
       "connection error; " +
           errors +
           ". A write that failed after others is followed by what was left and "
           "the command that recovers"},
      {"129, 130, 143",
       "interrupted by SIGHUP, SIGINT or SIGTERM (128 + the signal), acted on at a safe point: "
       "before a write, while waiting for the namespace lock, during --wait (deploy, scale, delete); the step under "
       "way is "
       "finished or reverted first. A second signal leaves at once with 128 + its number; the "
       "record in the namespace lock lets the next command recover"},
  };
}

}  // namespace mindie::cmd
