// The change engine's step runner: a multi-step write as a list of named steps, each fenced by the namespace lock,
// read back when its outcome is unknown and undone in reverse when a later one fails; the one place that words
// what a failure left and how it is recovered (docs/architecture.md, "The change protocol").
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "change/errors.h"

namespace mindie::change {

/// One write of a change.
struct Step {
  /// The object written, as printed: "deployment.apps/mindie-prefill-1".
  std::string name;
  /// What the write does to it, as kubectl says it: "created", "deleted", "configured", "scaled".
  std::string verb;
  /// Sends the write, with its precondition on the state read under the lock (resourceVersion; uid for deletes).
  std::function<void()> write;
  /// Reads back whether the write took effect, after a failure that leaves it unknown (no answer, a 5xx); throws
  /// when it cannot tell. Empty: taken as maybe applied (it is undone with the others: undos are idempotent).
  std::function<bool()> applied;
  /// Reverts the write. Empty: it cannot be reverted (a delete): a change stopped after it only goes forward, by
  /// the next command's recovery.
  std::function<void()> undo;
};

/// What the runner needs of the namespace lock (cmd::LockFence over cmd::NamespaceLock).
class Fence {
 public:
  virtual ~Fence() = default;
  /// Before each write: throws Interrupted when a signal was noted, LockLost (naming the holder) when the lock is no
  /// longer ours; renews it when due.
  virtual void before_write() = 0;
  /// Before each undo (which also runs after an interrupt): makes sure the lock is still ours, throws LockLost.
  virtual void before_undo() = 0;
  /// A write met 409 Conflict, its precondition on what was read under the lock: throws LockLost naming the new
  /// holder when the lock was taken over (the change must write nothing more), returns when it is still ours.
  virtual void confirm_held() = 0;
  /// The cluster is as the change found it, or as it wanted it: nothing is left to recover.
  virtual void nothing_to_recover() = 0;
  /// A write failed: what the change does from now on (read-backs, undos) is bounded in total, within the lease.
  virtual void bound_remaining() = 0;
  /// The failed write was read back as applied after all: the bound of bound_remaining() is lifted.
  virtual void lift_bound() = 0;
};

/// How a change reports a failure after some of its steps were written.
struct Wording {
  std::string change;  ///< "scale", "delete"
  /// What the cluster says now when an undo failed, read when it is printed ("" none): "the engine Deployments now
  /// run prefill 2".
  std::function<std::string()> observed;
  /// The exact recovery, appended when the change is left half-done: the next command finishes or reverts it;
  /// the commands that choose.
  std::string recovery;
  /// A server dry run: a failure says that nothing was changed (nothing is undone, no recovery).
  bool dry_run = false;
};

/// Which way recover() puts right a change left unfinished.
enum class Direction {
  Finish,  ///< write the steps not yet applied
  Revert,  ///< undo the applied steps, in reverse
};

/// What recover() found and did.
enum class Recovered {
  NothingApplied,   ///< no step had taken effect: nothing to do
  AlreadyComplete,  ///< every step had (Finish)
  Finished,         ///< the steps not applied were written
  Reverted,         ///< the applied steps were undone
};

/// Runs steps in order under a Fence. Not thread-safe; one per change.
class Runner {
 public:
  Runner(Fence& fence, Wording wording);
  /// Runs `steps` after those of earlier calls (a change whose later steps depend on what earlier ones returned).
  /// On a failure of step k (cause: the write's error, an Interrupted or a LockLost from the fence):
  /// - the lock lost: nothing more is written, not even an undo; PartialFailure naming what was written;
  /// - a 409 on a lock still held, a refusal (4xx), or an unknown outcome read back as not applied: step k counts
  ///   as not written; unknown and unreadable: as written;
  /// - nothing written: the fence is told nothing is left to recover and the cause is rethrown as it is;
  /// - else the written steps are undone in reverse: all undone, the fence is told nothing is left to recover and
  /// PartialFailure says "so the
  ///   <change> was undone" with what was reverted; an undo failed or a step cannot be undone: PartialFailure with
  ///   what was written, what the cluster says now and the recovery (the intent stays for the next command).
  void run(const std::vector<Step>& steps);
  /// Puts right a change that a command left unfinished (killed, or stopped by a failure it could not undo), from
  /// `steps` planned again from its intent: reads back each step's `applied` (which every step needs here), then
  /// goes `direction`. Writes go through run() (fenced, undone on failure), undos are fenced as run()'s are. The
  /// kind needs no recovery code of its own beyond its plan. Throws what reads, writes and undos throw.
  Recovered recover(const std::vector<Step>& steps, Direction direction);
  /// Names of the steps written so far, in order.
  const std::vector<std::string>& written() const { return written_names_; }

 private:
  /// After `step` failed with `cause`: whether it took effect all the same, read back when the cause leaves it
  /// unknown (no answer, a 5xx) or may be its own retried write (a 409, after confirming the lock); nullopt when it
  /// cannot be told. Throws PartialFailure / LockLost when the lock was lost.
  std::optional<bool> outcome(const Step& step, const std::exception_ptr& cause);
  /// The lock was lost (`why`, a LockLost): rethrows it when nothing was written, else PartialFailure naming what was.
  [[noreturn]] void lock_lost(const std::exception_ptr& why);
  /// `step` was not written (or `maybe_written`): undoes what was, and throws what the failure left.
  [[noreturn]] void fail(const Step& step, const std::exception_ptr& cause, bool maybe_written);
  [[noreturn]] void undo_all(const std::exception_ptr& cause, const std::string& stopped);
  std::string written_list() const;
  Fence& fence_;
  Wording wording_;
  std::vector<Step> written_;  ///< the steps written, kept for their undo
  std::vector<std::string> written_names_;
};

/// True when `cause` is an answer that says the write was not applied: a 4xx (a 409 included), or nothing sent
/// (an Interrupted, a LockLost, a local error).
bool refused(const std::exception_ptr& cause);

}  // namespace mindie::change
