#include "change/runner.h"

#include <algorithm>

#include "kube/client.h"

namespace mindie::change {

namespace {

bool is_conflict(const std::exception_ptr& cause) {
  try {
    std::rethrow_exception(cause);
  } catch (const kube::ApiError& e) {
    return e.is_conflict();
  } catch (const PreconditionFailed&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

bool refused(const std::exception_ptr& cause) {
  try {
    std::rethrow_exception(cause);
  } catch (const kube::ApiError& e) {
    return e.code() < 500;
  } catch (const kube::TransportError&) {
    return false;
  } catch (...) {
    return true;  // ours (an interrupt, the lock lost, a local check): nothing was sent
  }
}

Runner::Runner(Fence& fence, Wording wording) : fence_(fence), wording_(std::move(wording)) {}

std::string Runner::written_list() const {
  std::string out;
  for (const auto& name : written_names_) out += "\n  " + name;
  return out;
}

void Runner::run(const std::vector<Step>& steps) {
  for (const auto& step : steps) {
    try {
      fence_.before_write();
    } catch (const PlanAgain&) {
      throw;  // the lock's first take found it contended: nothing was written, the command plans again
    } catch (const LockLost&) {
      lock_lost(std::current_exception());
    } catch (...) {
      fail(step, std::current_exception(), false);  // a signal, or the lease unreachable: this step was not sent
    }
    try {
      step.write();
    } catch (...) {
      const auto cause = std::current_exception();
      if (!wording_.dry_run) fence_.bound_remaining();
      const std::optional<bool> applied = outcome(step, cause);
      if (applied != true) fail(step, cause, !applied.has_value());
      fence_.lift_bound();  // read back as applied: the change goes on at its usual pace
    }
    written_.push_back(step);
    written_names_.push_back(step.name + " " + step.verb);
  }
}

Recovered Runner::recover(const std::vector<Step>& steps, Direction direction) {
  std::vector<Step> applied, left;
  for (const auto& step : steps) (step.applied() ? applied : left).push_back(step);
  if (applied.empty()) return Recovered::NothingApplied;
  if (direction == Direction::Finish) {
    if (left.empty()) return Recovered::AlreadyComplete;
    run(left);
    return Recovered::Finished;
  }
  for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
    fence_.before_undo();
    it->undo();
  }
  return Recovered::Reverted;
}

std::optional<bool> Runner::outcome(const Step& step, const std::exception_ptr& cause) {
  try {
    std::rethrow_exception(cause);
  } catch (const LockLost&) {
    lock_lost(cause);
  } catch (...) {
  }
  // No answer or a 5xx: applied or not. A 409 may be the write's own first try, stored before its reply was lost
  // and met by the transport's retry. Only a read tells; the lock is confirmed first, since a 409 is also what a
  // rival's change gets, and then nothing more may be written.
  const bool unknown = !refused(cause);
  if (!unknown && !is_conflict(cause)) return false;
  try {
    if (!unknown) fence_.confirm_held();
  } catch (const LockLost&) {
    lock_lost(std::current_exception());
  }
  if (!step.applied) return unknown ? std::nullopt : std::optional<bool>(false);
  try {
    return step.applied();
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: a 409 too may have been this write's own stored first try
  }
}

void Runner::lock_lost(const std::exception_ptr& why) {
  if (written_.empty()) std::rethrow_exception(why);
  throw PartialFailure(why, wording_.change + " stopped after writing:" + written_list() +
                                "\nit writes nothing more, not even an undo: the command holding the lock now "
                                "finishes or reverts it");
}

void Runner::fail(const Step& step, const std::exception_ptr& cause, bool maybe_written) {
  // A server dry run changed nothing: no state to recover from, nothing to undo.
  if (wording_.dry_run) throw PartialFailure(cause, "(server dry run: no changes were made)");
  if (maybe_written) {  // it could not be read back: undone with the others (undos are idempotent)
    written_.push_back(step);
    written_names_.push_back(step.name + " " + step.verb + " (its outcome unknown)");
  }
  if (written_.empty()) {
    fence_.nothing_to_recover();
    fence_.lift_bound();  // nothing to report on or undo: what the command does next runs at its usual pace
    std::rethrow_exception(cause);
  }
  const bool forward_only = std::any_of(written_.begin(), written_.end(), [](const Step& s) { return !s.undo; });
  if (forward_only)  // a delete cannot be taken back: the change is finished by the next command
    throw PartialFailure(cause, wording_.change + " stopped at " + step.name + " after writing:" + written_list() +
                                    (wording_.recovery.empty() ? "" : "\n") + wording_.recovery);
  undo_all(cause, step.name);
}

void Runner::undo_all(const std::exception_ptr& cause, const std::string& stopped) {
  const std::string head = wording_.change + " stopped at " + stopped;
  std::string reverted;
  try {
    for (auto it = written_.rbegin(); it != written_.rend(); ++it) {
      fence_.before_undo();
      it->undo();
      reverted += "\n  " + it->name + " " + it->verb;
    }
  } catch (const LockLost&) {
    throw PartialFailure(std::current_exception(),
                         head + " after writing:" + written_list() +
                             "\nthe lock was taken over while it waited, "
                             "so it leaves the change to the command holding the lock now, which finishes or "
                             "reverts it");
  } catch (const std::exception& e) {
    const std::string now = wording_.observed ? "\n" + wording_.observed() : "";
    throw PartialFailure(cause, head + " and undoing it failed too (" + e.what() + "); written:" + written_list() +
                                    now + (wording_.recovery.empty() ? "" : "\n") + wording_.recovery);
  }
  fence_.nothing_to_recover();
  throw PartialFailure(cause, head + ", so the " + wording_.change +
                                  " was undone (these writes were "
                                  "reverted):" +
                                  reverted + "\nnothing changed");
}

}  // namespace mindie::change
