// The baseline's history on the cluster (mindie/revision.h): motor-config's ControllerRevisions listed, and a new one
// recorded by a named step of every change that writes the baseline (deploy, scale, update-config, rollback), or by
// the recovery of such a change that was cut short before it.
#pragma once

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "change/intent.h"
#include "change/runner.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "kube/client.h"
#include "mindie/revision.h"

namespace mindie::cmd {

/// apps/v1 controllerrevisions: the baseline's history.
inline const kube::GVR kControllerRevisions{"apps", "v1", "controllerrevisions", "ControllerRevision", true};

/// --history-limit as given, and what the revision a command records names as its command.
struct HistoryFlags {
  int history_limit = revision::kDefaultHistoryLimit;
  /// Not a flag: set by a command that runs another's Options (rollback: "rollback to 2"); "" names the command.
  std::string cause;
  /// `cause`, else `command`.
  std::string cause_or(const std::string& command) const { return cause.empty() ? command : cause; }
};

/// Binds HistoryFlags to `desc`.
void add_history_flags(boost::program_options::options_description& desc, HistoryFlags& flags);
/// --history-limit is 1..1000. No I/O. Throws UsageError.
void check_history_flags(const HistoryFlags& flags);

/// motor-config's revisions in `ns`, oldest first. One LIST.
std::vector<revision::Revision> list_revisions(kube::Client& client, const std::string& ns);

/// Revision `number` of `revisions` (list_revisions'). Throws CommandError naming the revisions there are; nothing is
/// sent or written.
const revision::Revision& find_revision(const std::vector<revision::Revision>& revisions, std::int64_t number,
                                        const std::string& ns);
/// list_revisions(), or CommandError when `ns` holds none: no deployment (no motor-config; one GET), or a baseline
/// no command of this version has written since.
std::vector<revision::Revision> existing_revisions(kube::Client& client, const std::string& ns);

/// This process as a revision's author: `command`, the user and host the namespace lock records, now.
revision::Author author_now(const std::string& command);
/// The author an intent records ("by": the command that recorded it, else the change's kind; "at"): a recovery's
/// revisions name who began the change.
revision::Author author_of(const change::Intent& intent);

/// The step that records the baseline in motor-config as a new revision when it differs from the latest, then
/// deletes the oldest beyond `limit`. `written` is motor-config as the change's baseline step left it (read when the
/// step runs; one GET when it is not a full ConfigMap). A user not allowed to list or create ControllerRevisions gets
/// a warning, not an error: the history is a record, the baseline is what counts. Read back by listing. `recorded`
/// (when given) receives the revision's number, 0 when none was needed.
change::Step revision_step(kube::Client& client, const std::string& ns, const boost::json::object& written,
                           revision::Author author, int limit, Printer& printer, std::int64_t* recorded = nullptr);

/// A recovery's last word: records motor-config as it is now when the latest revision differs, as `intent`'s author,
/// through a runner under `lock` (a GET and a LIST when nothing is missing). Returns ", revision N recorded" or "".
/// Throws what the reads and writes throw.
std::string record_missing_revision(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                    const change::Intent& intent);

/// `recovery` followed by record_missing_revision: how scale registers its recovery (register_recovery), so that a
/// scale cut short between its baseline write and its revision gets the revision (deploy's recovery writes the
/// baseline again, its revision step with it; update-config's is record_missing_revision alone).
Recovery recording_revision(Recovery recovery);

}  // namespace mindie::cmd
