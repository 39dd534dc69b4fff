// recover_interrupted_change (cmd/lock.h): the registry of each command's recovery, and the call through it.
#include <map>

#include "cmd/lock.h"
#include "util/time.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

std::map<std::string, Recovery>& recoveries() {
  static std::map<std::string, Recovery> registry;  // filled during static initialisation, read-only after
  return registry;
}

}  // namespace

bool register_recovery(const std::string& command, Recovery recovery) {
  recoveries()[command] = std::move(recovery);
  return true;
}

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
  if (const auto it = recoveries().find(command); it != recoveries().end())
    return it->second(client, lock, ns, intent, what);
  return "Warning: found the record of " + what + ", which this version of kubectl-mindie cannot finish or "
         "revert; removed it: check the deployment with kubectl mindie status -n " + ns;
}

}  // namespace mindie::cmd
