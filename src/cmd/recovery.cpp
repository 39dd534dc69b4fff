// recover_interrupted_change (cmd/lock.h): which command's intent is finished or reverted how.
#include "cmd/lock.h"
#include "cmd/delete.h"
#include "cmd/deploy.h"
#include "cmd/scale.h"
#include "util/time.h"

namespace mindie::cmd {

namespace json = boost::json;

std::string recover_interrupted_change(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                       const json::object& intent, const kube::LeaseRecord& holder) {
  const std::string command = intent_command(intent, "");
  std::string what = "an interrupted " + (command.empty() ? std::string("command") : command);
  if (const auto* at = intent.if_contains("at"); at != nullptr && at->is_int64())
    what += " from " + util::utc_text(at->get_int64(), "%H:%M UTC");
  what += " (" + describe_lock_holder(holder) + ")";
  // The recovery's own writes are recorded as this command's, should they be cut short too.
  struct Restore {
    NamespaceLock& lock;
    std::string previous;
    ~Restore() { lock.act_for(previous); }
  } restore{lock, lock.act_for(command)};
  if (command == "scale") return ScaleOptions::recover(client, lock, ns, intent, what);
  if (command == "deploy") return DeployOptions::recover(client, lock, ns, intent, what);
  if (command == "delete") return DeleteOptions::recover(client, lock, ns, intent, what);
  return "Warning: found the record of " + what + ", which this version of kubectl-mindie cannot finish or "
         "revert; removed it: check the deployment with kubectl mindie status -n " + ns;
}

}  // namespace mindie::cmd
