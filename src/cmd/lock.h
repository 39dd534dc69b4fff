// The namespace lock of mutating commands (deploy, scale, update-config, delete): one coordination.k8s.io Lease per
// deployment namespace, so that two commands never change one deployment at once (issue 17: concurrent scales and
// redeploys left the baseline and the live workload disagreeing).
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "change/intent.h"
#include "change/runner.h"
#include "cmd/common.h"
#include "cmd/interrupt.h"
#include "kube/lease_lock.h"

namespace mindie::cmd {

/// The Lease's name in the deployment namespace.
inline constexpr const char* kLockLeaseName = "kubectl-mindie";
/// Annotation on the Lease with the holder's record: {"format":1,"command","user","host","pid","pidns"}
/// ("pidns": its PID namespace, so that a holder is taken for gone only where its pid can be looked up).
inline constexpr const char* kLockHolderAnnotation = "kubectl-mindie/holder";
/// Annotation on the Lease with the holder's intent: what its command is about to change, written with the lock's
/// take before the first write and removed when the command ends with a consistent state; left behind by a command
/// that was killed or could not undo a half-done change, for the next command to finish or revert
/// (recover_interrupted_change). JSON: {"format":1,"command","at" (seconds since the epoch), "by", ...the command's}.
/// deploy, scale, update-config and delete record one (update-config's stands for the baseline's revision that follows
/// its one compare-and-swap write).
inline constexpr const char* kLockIntentAnnotation = "kubectl-mindie/intent";
/// Annotation on the Lease with the record of its last holder (as kLockHolderAnnotation's, plus "freed": seconds
/// since the epoch), written as the lock is freed: a command that finds the lock was taken over while it stalled
/// names who took it, even when that command has finished since.
inline constexpr const char* kLockLastHolderAnnotation = "kubectl-mindie/last-holder";
/// Seconds a holder that stops renewing keeps the lock. Long enough for the slowest step between two renewals
/// (one request with its retries, bounded by --request-timeout, or a server dry run of a large InferServiceSet).
inline constexpr int kLockDurationSeconds = 60;

/// The longest one request of a command holding the lock may take, its retries included (Session's
/// max_request_timeout for deploy, scale, update-config and delete): shorter than the lease's duration less the
/// renewal interval (kLockDurationSeconds / 3, LeaseLock::renew_if_due), so that a write stalled in the network is
/// given up — and a request whose client is gone is not carried out — before another command can take the lock over;
/// otherwise a stalled write could land after the new holder's recovery (a new-user trial: a scale patch held 62 s
/// landed after the next command had dropped its intent).
inline constexpr std::chrono::milliseconds kLockRequestBound{30'000};

/// A write that follows the command's previous write (or lock renewal) by more than this confirms the lock first
/// (one guarded renewal): a process stopped (SIGSTOP, a paused VM) or slowed between two writes may have lost it,
/// and its own clock cannot tell how fast a rival's ran. Consecutive writes of a running command are milliseconds
/// apart, so a change costs no extra request unless something held it up.
inline constexpr std::chrono::milliseconds kLockIdleCheck{1000};

/// What a change may still take once one of its writes failed (its read-backs, undos, the lock's confirmations and
/// release, all together): with the failed request's own kLockRequestBound it stays within the lease, so that the
/// command has said what it left before another can take the lock over — also when the server is unreachable.
inline constexpr std::chrono::milliseconds kLockRecoveryBound{20'000};

/// --lock-timeout as given.
struct LockFlags {
  std::string lock_timeout = "30s";  ///< a Go duration; "0" fails at once when the lock is held
};

/// Binds LockFlags to `desc`.
void add_lock_flags(boost::program_options::options_description& desc, LockFlags& flags);
/// Parses --lock-timeout (a Go duration, >= 0). No I/O. Throws UsageError.
std::chrono::milliseconds check_lock_flags(const LockFlags& flags);

using change::LockLost;   // thrown by NamespaceLock when the lock was taken over while the command ran
using change::PlanAgain;  // thrown by NamespaceLock::before_write() when the lock was contended since the first read

/// The lock one command run takes. Construct it before the command's first read; call before_write() before
/// every write (the first call takes the lock, later ones renew it when due) and done() after the last. The
/// destructor frees a lock still held (a failure): the lease never outlives the process unless it is killed, and
/// then the next command takes it over at once on this host (the pid is gone), or once it has seen the lease stay
/// unrenewed for kLockDurationSeconds (kube::LeaseLock::acquire: a command waits that long when --lock-timeout > 0).
/// Warnings the command prints before its first write are held back until the lock is taken, and dropped when it
/// must plan again.
/// While enabled, SIGINT/SIGTERM/SIGHUP are noted (InterruptGuard) and before_write() throws Interrupted at the next
/// write, so the command reverts the step under way.
class NamespaceLock {
 public:
  /// `command`: the subcommand's name, recorded for whoever waits. `wait`: --lock-timeout. `enabled` false (a dry
  /// run): nothing is sent, before_write() does nothing. Sends one GET (the lease as it is now).
  NamespaceLock(kube::Client& client, Printer& printer, const std::string& ns, const std::string& command,
                std::chrono::milliseconds wait, bool enabled = true);
  ~NamespaceLock();
  NamespaceLock(const NamespaceLock&) = delete;
  NamespaceLock& operator=(const NamespaceLock&) = delete;

  /// Before each write: takes the lock (first call; take()) or renews it (renew_for_write()), recording `intent`
  /// (none: the write records nothing). Throws PlanAgain, LockLost, Interrupted, CommandError (held; RBAC).
  void before_write(const std::optional<change::Intent>& intent = std::nullopt);
  /// Renews the lock when due, without looking at signals or the intent: for the writes of an undo, which must run
  /// after an interrupt. Throws LockLost.
  void renew();
  /// Renews the lock now (one guarded write) to make sure it is still ours before an undo. Throws LockLost naming
  /// the new holder when it was taken over; does nothing when not held.
  void confirm();
  /// From now on every request ends within kLockRecoveryBound (a write of the change failed).
  void bound_remaining();
  /// Lifts bound_remaining()'s bound (the failed write turned out applied).
  void lift_bound();
  /// Frees the lock (after the command's last write) and clears the intent; a failure to free it is a warning, not
  /// an error: the lease expires. `remove`: delete the Lease instead (delete, which removes everything in the
  /// namespace).
  void done(bool remove = false);
  /// The command failed but left the cluster as it found it (nothing was applied, or it was undone): the intent is
  /// cleared when the lock is freed. Without it, a failing command frees the lock and leaves its intent for the next
  /// command to recover. After superseding an earlier intent, that one is put back instead: what it stood for is
  /// still to be put right.
  void nothing_to_recover() { nothing_to_recover_ = true; }
  /// Takes nothing_to_recover() back: the intent recorded stays for the next command (a change kind whose earlier
  /// steps left something to recover when a later one was refused).
  void keep_intent() { nothing_to_recover_ = false; }
  /// True while the lock is held.
  bool held() const { return lock_ && lock_->held(); }
  /// Where the command prints: recoveries warn through it.
  Printer& printer() const { return printer_; }
  /// True when the lease as read at construction records an intent (a change left unfinished, or one a live holder
  /// is making) and the lock is not held yet.
  bool unfinished_change_seen() const;
  /// True when the Lease existed when read at construction and the lock is not held yet.
  bool lease_seen() const { return lock_ && !lock_->held() && lock_->observed().has_value(); }
  /// When unfinished_change_seen(), takes the lock now, before the command's own reads: the unfinished change is
  /// recovered (or the live holder waited for) first, so that no command plans from, fails on, or reports
  /// "unchanged" over a half-done change. Call it right after construction (scale, update-config; deploy and delete
  /// supersede instead, at their first before_write). Throws as before_write() but PlanAgain.
  void recover_first();

 private:
  /// Rethrows `e`, a failure to `doing` the Lease, as a CommandError saying what to do when it is a 403 (the RBAC
  /// the lock needs) or, before the lock is held, a 404 of the namespace itself (create it); as it is otherwise.
  [[noreturn]] void rethrow_as_command_error(const std::exception_ptr& e, const std::string& doing) const;
  /// before_write() with the lock held: records `intent` when it differs from what the lease holds, else renews
  /// the lock when due, or confirms it after a pause longer than kLockIdleCheck. Throws LockLost.
  void renew_for_write(const std::optional<change::Intent>& intent);
  /// before_write()'s first call: takes the lock with `intent`, recovering or superseding an intent an earlier
  /// holder left (then throws PlanAgain), and throws PlanAgain when anyone held it since construction.
  void take(const std::optional<change::Intent>& intent);
  /// The intent annotation's text for `intent`: stamped with the time and its author, carrying the intent this
  /// command superseded.
  std::string intent_text(change::Intent intent) const;
  /// Finishes or reverts the intent an earlier holder left in `previous`, then clears it; prints one line.
  void recover(const kube::LeaseRecord& previous, const std::string& text);
  /// deploy or delete found `text`, an intent an earlier holder left in `lease`: a deploy writes the baseline and the
  /// whole workload again, a delete removes it all, so rather than recovering it first (which could fail the same
  /// way, e.g. a stored config the server refuses) it records its own `intent` with the earlier one under
  /// "supersedes" in its place; prints one line. Throws LockLost, CommandError (RBAC).
  void supersede(const kube::LeaseRecord& lease, const std::string& text, const change::Intent& intent);
  /// The kLockLastHolderAnnotation written as the lock is freed.
  boost::json::object last_holder() const;
  /// Frees the lock; `clear_intent`: remove the intent annotation too.
  void unlock(bool remove, bool clear_intent);
  /// LockLost for a lease lost (`e`) `when` ("while this command ran"), naming who holds it now, or who held it
  /// last when it has been freed since (one GET).
  LockLost lost(const kube::LeaseLost& e, const std::string& when) const;
  kube::Client& client_;
  Printer& printer_;
  std::string ns_;
  std::string command_;
  std::chrono::milliseconds wait_;
  std::unique_ptr<kube::LeaseLock> lock_;       // null when disabled
  std::unique_ptr<InterruptGuard> interrupts_;  // null when disabled
  std::string recorded_;                        ///< the intent in the lease, unstamped (intent_key; "" none)
  bool nothing_to_recover_ = false;
  /// The lease holds an intent an earlier holder left, not yet recovered: it is never cleared but by recover().
  bool foreign_intent_ = false;
  /// The earlier intent a deploy or delete superseded: recorded under "supersedes" in its own, and put back when the
  /// command had nothing to recover (changed nothing).
  std::optional<boost::json::object> superseded_;
  bool clear_all_ = false;  ///< done() was called: the command finished
  /// A write follows: before_write() returned since the lock was taken (or since the last PlanAgain). A command that
  /// fails while not armed wrote nothing under the lock (it failed a check after planning again), so its intent is
  /// cleared as if nothing were left to recover.
  bool armed_ = false;
  boost::json::object holder_;  ///< this process's holder record (kLockHolderAnnotation)
  /// When the previous before_write() began (before its lease write, if any, was sent): a write whose
  /// before_write() comes more than kLockIdleCheck later confirms the lock first (a process stopped, or a reply
  /// held up, in between may have lost it); between such gaps, renew_if_due() proves it every third of the lease.
  std::chrono::steady_clock::time_point last_sure_{};
  /// The original author ("by") of an intent being recovered: kept in the intents the recovery's steps record.
  std::optional<boost::json::object> recovering_by_;
  /// recover() runs: the writes of the recovery record the intent they recover, with its author.
  bool recovering_ = false;
};

/// The change engine's fence (change/runner.h) over a NamespaceLock: each write records `intent` (taking the lock
/// on the first), each undo and each conflict confirm the lock is still ours.
class LockFence : public change::Fence {
 public:
  /// `intent`: what each write records; none for a change of one write (update-config's).
  LockFence(NamespaceLock& lock, std::optional<change::Intent> intent) : lock_(lock), intent_(std::move(intent)) {}
  void before_write() override { lock_.before_write(intent_); }
  void before_undo() override { lock_.confirm(); }
  void confirm_held() override { lock_.confirm(); }
  void nothing_to_recover() override { lock_.nothing_to_recover(); }
  void bound_remaining() override { lock_.bound_remaining(); }
  void lift_bound() override { lock_.lift_bound(); }

 private:
  NamespaceLock& lock_;
  std::optional<change::Intent> intent_;
};

/// Who left `intent`: `lease`'s holder record, or when the lease was freed since (its holder cleared) the record the
/// intent carries ("by").
kube::LeaseRecord intent_left_by(const kube::LeaseRecord& lease, const boost::json::object& intent);

/// Finishes or reverts a change of one kind that an earlier holder left unfinished, with the lock held: `intent` (read
/// from its kLockIntentAnnotation record), `what` naming it ("an interrupted scale from 14:02 UTC (...)"). Returns the
/// line to print. Each mutating command registers its own (register_recovery): the lock knows none of them.
using Recovery = std::function<std::string(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                           const change::Intent& intent, const std::string& what)>;
/// Registers `recovery` for the intents whose "command" is `command` (at static initialisation); returns true.
bool register_recovery(const std::string& command, Recovery recovery);

/// Finishes or reverts the change `intent` (a kLockIntentAnnotation record that `holder` left unfinished; the
/// caller holds `lock`) by the recovery registered for its command and returns the line that says which and why, e.g.
/// "recovered an interrupted scale from 14:02 UTC (scale by root@host-1, pid 4711): prefill 1 → 3, completed". Intents
/// of commands this version cannot recover are reported, not changed. Throws what the recovering writes throw.
std::string recover_interrupted_change(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                       const boost::json::object& intent, const kube::LeaseRecord& holder);

/// One-line description of a lock holder's record ("scale by root@host-1, pid 4711").
std::string describe_lock_holder(const kube::LeaseRecord& record);

/// What the namespace lock's Lease tells status (one GET of lease/kubectl-mindie, absent: nothing).
struct LockNotes {
  std::vector<std::string> drift;       ///< an intent left by a command that is gone, with its age
  std::vector<std::string> converging;  ///< a change that a live holder is making now
  /// The roles a scale, redeploy or rollout under way (a live holder's intent) is changing: role → (from, to).
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> scaling;
  std::string scaling_by;  ///< the command changing them: "scale", "deploy", or "rollout" (its temporary instances)
};
/// Reads `lease` (a Lease object) at `now` (seconds since the epoch). One look cannot watch the lease as LeaseLock
/// does: a holder's renewTime is compared with `now` to tell a likely live holder from a gone one, and a renewTime
/// ahead of `now` (the clocks disagree) is said to be so, as under way or abandoned.
LockNotes lock_notes(const boost::json::object& lease, std::int64_t now);

/// True when `record` names a process of this host (same host name and PID namespace) that no longer runs, or is
/// a zombie: its lease can be taken at once.
bool lock_holder_gone(const kube::LeaseRecord& record);

}  // namespace mindie::cmd
