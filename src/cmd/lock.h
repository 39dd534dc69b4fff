// The namespace lock of mutating commands (deploy, scale, update-config, delete): one coordination.k8s.io Lease per
// deployment namespace, so that two commands never change one deployment at once (issue 17: concurrent scales and
// redeploys left the baseline and the live workload disagreeing).
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "cmd/common.h"
#include "kube/lease_lock.h"

namespace mindie::cmd {

/// The Lease's name in the deployment namespace.
inline constexpr const char* kLockLeaseName = "kubectl-mindie";
/// Annotation on the Lease with the holder's record: {"format":1,"command","user","host","pid"}.
inline constexpr const char* kLockHolderAnnotation = "kubectl-mindie/holder";
/// Seconds a holder that stops renewing keeps the lock. Long enough for the slowest step between two renewals
/// (one request with its retries, bounded by --request-timeout, or a server dry run of a large InferServiceSet).
inline constexpr int kLockDurationSeconds = 60;

/// --lock-timeout as given.
struct LockFlags {
  std::string lock_timeout = "30s";  ///< a Go duration; "0" fails at once when the lock is held
};

/// Binds LockFlags to `desc`.
void add_lock_flags(boost::program_options::options_description& desc, LockFlags& flags);
/// Parses --lock-timeout (a Go duration, >= 0). No I/O. Throws UsageError.
std::chrono::milliseconds check_lock_flags(const LockFlags& flags);

/// Thrown by NamespaceLock::before_write() when the lock was held by someone else since the command read the
/// cluster: the command plans again from fresh reads (it holds the lock by then). Never reaches the user.
class Replan : public std::exception {
 public:
  const char* what() const noexcept override { return "the namespace lock was contended: plan again"; }
};

/// The lock one command run takes. Construct it before the command's first read; call before_write() before
/// every write (the first call takes the lock, later ones renew it when due) and done() after the last. The
/// destructor frees a lock still held (a failure): the lease never outlives the process unless it is killed, and
/// then the next command takes it over at once on this host (the pid is gone) or after kLockDurationSeconds.
/// Warnings the command prints before its first write are held back until the lock is taken, and dropped when it
/// must plan again.
class NamespaceLock {
 public:
  /// `command`: the subcommand's name, recorded for whoever waits. `wait`: --lock-timeout. `enabled` false (a dry
  /// run): nothing is sent, before_write() does nothing. Sends one GET (the lease as it is now).
  NamespaceLock(kube::Client& client, Printer& printer, const std::string& ns, const std::string& command,
                std::chrono::milliseconds wait, bool enabled = true);
  ~NamespaceLock();
  NamespaceLock(const NamespaceLock&) = delete;
  NamespaceLock& operator=(const NamespaceLock&) = delete;

  /// Takes the lock on the first call: waits up to `wait` for a holder that is alive (one notice line on stderr),
  /// takes over an expired lease or one whose process is gone (a warning naming it), then throws Replan when anyone
  /// held it since construction. Later calls renew it when due. Throws CommandError naming the holder when it stays
  /// held, naming the permission when RBAC forbids Leases, and when the lock was taken over meanwhile.
  void before_write();
  /// Frees the lock (after the command's last write); a failure to free it is a warning, not an error: the lease
  /// expires. `remove`: delete the Lease instead (delete, which removes everything in the namespace).
  void done(bool remove = false);

 private:
  [[noreturn]] void rethrow_as_command_error(const std::exception_ptr& e, const std::string& doing) const;
  kube::Client& client_;
  Printer& printer_;
  std::string ns_;
  std::chrono::milliseconds wait_;
  std::unique_ptr<kube::LeaseLock> lock_;  // null when disabled
};

/// One-line description of a lock holder's record ("scale by root@host-1, pid 4711").
std::string describe_lock_holder(const kube::LeaseRecord& record);

/// True when `record` names a process of this host (same host name) that no longer runs: its lease can be taken
/// at once.
bool lock_holder_gone(const kube::LeaseRecord& record);

}  // namespace mindie::cmd
