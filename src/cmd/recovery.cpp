// The lock's recovery of a change left unfinished (cmd/lock.h): the registry of each kind's recovery, the call
// through it, and NamespaceLock::recover and supersede.
#include <map>

#include "cmd/lock.h"
#include "cmd/lock_records.h"
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
    return "Warning: found the record of " + what +
           ", which this version of kubectl-mindie cannot finish or "
           "revert; removed it: check the deployment with kubectl mindie status -n " +
           ns;
  change::Intent intent;
  try {
    intent = change::parse_intent(record);
  } catch (const change::UnreadableIntent&) {
    return "Warning: removed an unreadable record of " + what + " from lease/" + kLockLeaseName;
  }
  return it->second(client, lock, ns, intent, what);
}

void NamespaceLock::recover(const kube::LeaseRecord& lease, const std::string& text) {
  json::error_code ec;
  json::value intent = json::parse(text, ec);
  const kube::LeaseRecord previous = intent_left_by(lease, intent.is_object() ? intent.get_object() : json::object());
  foreign_intent_ = true;  // whatever happens now, it stays until recovered
  recovering_ = true;
  if (intent.is_object())
    if (const auto* by = intent.get_object().if_contains("by"); by != nullptr && by->is_object())
      recovering_by_ = by->get_object();
  std::string line;
  try {
    line = ec || !intent.is_object()
               ? "Warning: removed an unreadable record of an interrupted command from lease/" +
                     std::string(kLockLeaseName) + " (left by " + describe_lock_holder(previous) + ")"
               : recover_interrupted_change(client_, *this, ns_, intent.get_object(), previous);
  } catch (const Interrupted&) {
    throw;
  } catch (...) {
    throw PartialFailure(
        std::current_exception(),
        "kubectl-mindie found a change that " + describe_lock_holder(previous) + " began in namespace " + ns_ +
            " and never ended, and could not finish or revert it; "
            "its record stays in lease/" +
            kLockLeaseName +
            " for the next command to try again; to drop it "
            "instead, once you have checked the deployment (kubectl mindie status -n " +
            ns_ + "): kubectl annotate lease " + kLockLeaseName + " -n " + ns_ + " " + kLockIntentAnnotation + "-");
  }
  lock_->update({{kLockIntentAnnotation, nullptr}});
  recorded_.clear();
  recovering_by_.reset();
  recovering_ = false;
  foreign_intent_ = false;
  nothing_to_recover_ = false;  // the recovery's own, not the command's
  printer_.notice(line);
}

void NamespaceLock::supersede(const kube::LeaseRecord& lease, const std::string& text, const change::Intent& intent) {
  json::error_code ec;
  const json::value left = json::parse(text, ec);
  const json::object none;
  const json::object& o = !ec && left.is_object() ? left.get_object() : none;
  const std::string command = change::known_command(o).value_or("command");
  std::string when;
  if (const auto* at = o.if_contains("at"); at != nullptr && at->is_int64())
    when = " from " + util::utc_text(at->get_int64(), "%H:%M UTC");
  // The earlier intent as it was ("by" included, which names who left it once the holder record is gone).
  superseded_ = o;
  if (!superseded_->contains("by") && !lease.holder.empty()) (*superseded_)["by"] = lease.holder;
  // From here the lease records this command's intent, which carries the earlier one: its recovery puts right
  // whatever either wrote (DeployOptions::recover, DeleteOptions::recover).
  try {
    lock_->update({{kLockIntentAnnotation, intent_text(intent)}});
  } catch (const kube::LeaseLost& e) {
    throw LockLost(std::string(e.what()) + " while this command began: nothing was changed");
  } catch (...) {
    rethrow_as_command_error(std::current_exception(), "update");
  }
  recorded_ = intent_key(intent);
  printer_.notice("found an interrupted " + command + when + " (" + describe_lock_holder(intent_left_by(lease, o)) +
                  "): this " + command_ + " supersedes it (" +
                  (command_ == "delete" ? "it deletes the whole deployment"
                                        : "it writes the baseline and the whole workload again") +
                  ")");
}

}  // namespace mindie::cmd
