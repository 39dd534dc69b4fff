// The errors a command reports and those the change engine and the namespace lock raise, below both
// (docs/architecture.md, "The change protocol"): the commands name them in namespace cmd, the runner here.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace mindie::change {

/// A failure of the command's own logic that kubectl would print as "error: ...". The message names the field,
/// object or state concerned and, where something was left behind, how to recover.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failure with a note. The original error (`cause`, an ApiError, TransportError, ...) is printed as usual,
/// followed by what(): the state the cluster is left in after earlier writes and the command that recovers, or
/// the advice on how to proceed.
class PartialFailure : public std::runtime_error {
 public:
  PartialFailure(std::exception_ptr cause, const std::string& state)
      : std::runtime_error(state), cause_(std::move(cause)) {}
  const std::exception_ptr& cause() const { return cause_; }

 private:
  std::exception_ptr cause_;
};

/// Thrown by the lock before a change's first write when it was held by someone else since the command read the
/// cluster: the command plans again from fresh reads (it holds the lock by then). Never reaches the user.
class PlanAgain : public std::exception {
 public:
  const char* what() const noexcept override { return "the namespace lock was contended: plan again"; }
};

/// Thrown by the lock when it was taken over while the command ran (it stalled longer than the lease's duration):
/// whoever holds it now may be writing, so the command must not write, not even to undo.
class LockLost : public CommandError {
 public:
  using CommandError::CommandError;
};

/// A write's precondition other than a resourceVersion failed (a JSON Patch test op: the object changed since it
/// was read): treated as a 409 Conflict, so the lock is confirmed before anything else.
class PreconditionFailed : public CommandError {
 public:
  using CommandError::CommandError;
};

}  // namespace mindie::change
