// SIGINT, SIGTERM and SIGHUP during a mutating command (issue 17): the first signal is noted and acted on at the
// next safe point (before a write), where the command reverts the step under way; a second one leaves at once.
#pragma once

#include <string>

#include "cmd/common.h"

namespace mindie::cmd {

/// Thrown at a safe point after a signal: the command stops, reverts what it can, and exits 128 + the signal's
/// number (130 SIGINT, 143 SIGTERM, 129 SIGHUP), as a shell reports a process killed by it.
class Interrupted : public CommandError {
 public:
  Interrupted(int signal, const std::string& what) : CommandError(what), signal_(signal) {}
  int signal() const { return signal_; }
  int exit_code() const { return 128 + signal_; }

 private:
  int signal_;
};

/// While alive, SIGINT, SIGTERM and SIGHUP are noted instead of ending the process (the previous handlers come back
/// on destruction). On the first, one line on stderr says the step under way is being finished; a second signal
/// writes a line and ends the process at once with 128 + its number (the namespace lock's recorded intent lets the
/// next command recover). Not nestable across threads: one per process at a time.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

/// The signal noted since the guard was installed, 0 when none.
int pending_interrupt();
/// `waiting` true: the command's change is done and only a wait (--wait) runs, so the lines a signal prints say
/// that instead of speaking of a step under way.
void interrupt_while_waiting(bool waiting);
/// Throws Interrupted when a signal was noted: "interrupted by SIGINT " + `where` (e.g. "before writing the
/// baseline").
void check_interrupt(const std::string& where);

/// The exit status for `e`: Interrupted's (also as a PartialFailure's cause), else 1.
int exit_code_of(const std::exception_ptr& e);

}  // namespace mindie::cmd
