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
                                       const json::object& record, const kube::LeaseRecord& holder) {
  const auto command = change::known_command(record);
  std::string what = "an interrupted " + command.value_or("command");
  if (const auto* at = record.if_contains("at"); at != nullptr && at->is_int64())
    what += " from " + util::utc_text(at->get_int64(), "%H:%M UTC");
  what += " (" + describe_lock_holder(holder) + ")";
  const auto it = command ? recoveries().find(*command) : recoveries().end();
  if (it == recoveries().end())
    return "Warning: found the record of " + what + ", which this version of kubectl-mindie cannot finish or "
           "revert; removed it: check the deployment with kubectl mindie status -n " + ns;
  change::Intent intent;
  try {
    intent = change::parse_intent(record);
  } catch (const change::UnreadableIntent&) {
    return "Warning: removed an unreadable record of " + what + " from lease/" + kLockLeaseName;
  }
  return it->second(client, lock, ns, intent, what);
}

}  // namespace mindie::cmd
