#include "cmd/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace mindie::cmd {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<int> g_pending{0};
std::atomic<bool> g_waiting{false};  // interrupt_while_waiting(): the change is done, only a wait runs
struct sigaction g_previous[3];
int g_depth = 0;

void write_err(const char* s) {
  // write(2) is async-signal-safe; a failed write is ignored (nothing better to do in a handler).
  const ssize_t ignored = ::write(STDERR_FILENO, s, std::strlen(s));
  (void)ignored;
}

extern "C" void on_signal(int sig) {
  const int saved = errno;  // the interrupted code may be about to read it
  struct Restore {
    int e;
    ~Restore() { errno = e; }
  } restore{saved};
  static_assert(std::atomic<int>::is_always_lock_free, "the handler's flag must be lock-free");
  int expected = 0;
  const bool waiting = g_waiting.load();
  if (g_pending.compare_exchange_strong(expected, sig)) {
    write_err(waiting
                  ? "\ninterrupted: stopping the wait (interrupt again to leave at once)\n"
                  : "\ninterrupted: finishing or reverting the step under way (interrupt again to leave at once)\n");
    return;
  }
  write_err(waiting ? "\nleft at once: the change itself is done; only the wait stopped\n"
                    : "\nleft at once: a change under way stays recorded in lease/kubectl-mindie, and the next "
                      "kubectl-mindie command in this namespace finishes or reverts it\n");
  ::_exit(128 + sig);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

}  // namespace

InterruptGuard::InterruptGuard() {
  if (g_depth++ > 0) return;
  g_pending = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // requests under way carry on; the command acts at its next safe point
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
}

InterruptGuard::~InterruptGuard() {
  if (--g_depth > 0) return;
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  g_pending = 0;  // acted on by the command that noted it (Interrupted carries the signal)
}

int pending_interrupt() { return g_pending.load(); }

void interrupt_while_waiting(bool waiting) { g_waiting = waiting; }

void check_interrupt(const std::string& where) {
  if (const int sig = g_pending.load(); sig != 0)
    throw Interrupted(sig, std::string("interrupted by ") + signal_name(sig) + " " + where);
}

int exit_code_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Interrupted& i) {
    return i.exit_code();
  } catch (const PartialFailure& p) {
    return exit_code_of(p.cause());
  } catch (...) {
    return 1;
  }
}

}  // namespace mindie::cmd
