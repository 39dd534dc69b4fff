// A mutual-exclusion lock on a coordination.k8s.io/v1 Lease, as client-go's leader election uses one: the holder's
// identity, acquire and renew times and a duration after which a holder that stopped renewing counts as gone.
// Knows Leases and nothing of what the lock protects.
// Clocks: as client-go's LeaderElector (kubernetes/client-go tools/leaderelection/leaderelection.go,
// tryAcquireOrRenew: observedRawRecord, observedTime), another holder's lease expires when its record stays unchanged
// for its duration on this process's own monotonic clock; the renewTime and acquireTime it carries were written by
// another host's clock and are only displayed, never compared with ours. So no clock skew between hosts, and no jump
// of a wall clock, moves an expiry; only a difference in clock rate could.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kube/client.h"

namespace mindie::kube {

namespace gvr {
extern const GVR kLeases;  ///< coordination.k8s.io/v1 leases
}

/// What a Lease says about its holder.
struct LeaseRecord {
  std::string identity;             ///< spec.holderIdentity; "" when nobody holds it
  boost::json::object holder;       ///< the holder's own record (LeaseLockConfig::holder_annotation), {} when absent
  boost::json::object annotations;  ///< metadata.annotations with string values (a holder's other records)
  std::optional<std::int64_t> acquired;  ///< spec.acquireTime, seconds since the epoch
  std::optional<std::int64_t> renewed;   ///< spec.renewTime, seconds since the epoch
  int duration_seconds = 0;              ///< spec.leaseDurationSeconds
  std::string resource_version;
  /// Decodes a Lease object; fields that are absent or malformed stay empty (a Lease anyone may have written).
  static LeaseRecord from(const boost::json::object& lease, const std::string& holder_annotation);
};

/// Which lease and who takes it.
struct LeaseLockConfig {
  std::string ns;
  std::string name;
  std::string identity;                  ///< unique per process: spec.holderIdentity
  std::string holder_annotation;         ///< annotation key holding `holder` as JSON text
  boost::json::object holder;            ///< what waiting commands print about the holder (user, host, pid, ...)
  boost::json::object labels;            ///< metadata.labels of a lease this lock creates
  int duration_seconds = 60;             ///< spec.leaseDurationSeconds
  std::chrono::milliseconds wait{0};     ///< how long acquire() waits for a held lease (see acquire()); 0: not at all
  std::chrono::milliseconds poll{1000};  ///< between two looks at a held lease while waiting
};

/// The clocks a lock reads and sleeps on (tests pass their own: no real sleeping in unit tests).
struct LeaseClock {
  /// Wall time: only what the lease's acquireTime and renewTime say of our own takes and renewals (for people).
  std::function<std::chrono::system_clock::time_point()> now;
  /// Monotonic time: every duration the lock measures (expiry of another's lease, our renewal cadence, waiting).
  std::function<std::chrono::steady_clock::time_point()> steady;
  /// Waits; `steady` has moved on by about that much afterwards.
  std::function<void(std::chrono::milliseconds)> sleep;
  /// The system's clocks (system_clock, steady_clock) and std::this_thread::sleep_for.
  static LeaseClock wall();
};

/// acquire() gave up: the lease is held by someone alive. `holder` is the last record seen.
class LeaseHeld : public std::runtime_error {
 public:
  LeaseHeld(const std::string& what, LeaseRecord holder) : std::runtime_error(what), holder_(std::move(holder)) {}
  const LeaseRecord& holder() const { return holder_; }

 private:
  LeaseRecord holder_;
};

/// renew() found the lease taken over (or deleted) by someone else: whoever holds it now may be writing.
class LeaseLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A Lease taken by one process. Not thread-safe. Requests go through `client` (ApiError / TransportError
/// propagate, a 403 included: the caller names the permission).
class LeaseLock {
 public:
  /// `holder_gone(record)`: true when the record's holder is known to have stopped (a process of this host that no
  /// longer runs), so its lease may be taken at once rather than after it expires.
  LeaseLock(Client& client, LeaseLockConfig config, std::function<bool(const LeaseRecord&)> holder_gone,
            LeaseClock clock = LeaseClock::wall());

  /// Reads the lease (one GET) and remembers it, so that acquire() can tell whether anyone took it in between: a
  /// caller observes, reads what it is about to change, then acquires before its first write, whose first attempt
  /// writes against this read (one request when nobody came in between).
  void observe();
  /// Why acquire() took a lease someone else held.
  struct TakeOver {
    LeaseRecord previous;
    bool expired = false;  ///< false: holder_gone said so
  };
  /// What acquire() found.
  struct Acquired {
    std::optional<TakeOver> takeover;  ///< the holder taken over from
    /// The lease as found before it was taken (empty when created; as found holding our identity after a take
    /// whose reply was lost): its annotations may hold a record that an earlier holder left unfinished.
    LeaseRecord previous;
    /// True when the lease changed since observe() (or observe() was not called): someone held it in between, so
    /// what was read before may be stale.
    bool contended = false;
  };
  /// Takes the lease: creates it when absent, takes it when free (no holderIdentity), expired or its holder is
  /// gone; otherwise calls `on_wait` once with the holder and looks again every `poll` until `wait` has passed,
  /// then throws LeaseHeld. Expired: its record (holderIdentity, renewTime, resourceVersion) has stayed unchanged,
  /// from the first look at it (observe()'s included), for its leaseDurationSeconds (ours when it has none) on
  /// LeaseClock::steady; a record that changes starts the observation again (client-go's observedTime).
  /// Waiting: with `wait` > 0, a lease whose record has not changed since the wait began is waited for beyond
  /// `wait` until that observation reaches its duration (at most our own duration_seconds), so that one run takes
  /// over a lock its holder abandoned; a record that changes meanwhile (a live holder renewing) ends the wait at
  /// `wait`. With `wait` 0 it throws at once: one look cannot tell an abandoned lease from a live one.
  /// A rival's write between a read and ours (409) makes it look again. Every write is
  /// guarded by the resourceVersion read, so two processes never both hold it. The create (a POST, which the
  /// transport never repeats) is tried again after a fresh look when it fails with 429, 5xx or a connection error,
  /// up to 4 times with backoff: a create whose reply was lost is found holding our identity.
  /// `annotations` (string values) are written by the same request, except keys the lease found already carries:
  /// those are an earlier holder's left-overs, which the caller reads from Acquired::previous and replaces with
  /// update().
  Acquired acquire(const std::function<void(const LeaseRecord&)>& on_wait = {},
                   const boost::json::object& annotations = {});
  /// Merges `annotations` into the lease and renews it (resourceVersion-guarded merge patch). Throws LeaseLost
  /// when the lease is no longer ours.
  void update(const boost::json::object& annotations);
  /// Renews when a third of the duration has passed on LeaseClock::steady since the last renewal (so a slow command
  /// keeps its lease and a fast one writes nothing more; a jump of the wall clock changes nothing); throws LeaseLost
  /// as update().
  void renew_if_due();
  /// Frees the lease: clears its holder (resourceVersion-guarded merge patch), keeping the object, whose changing
  /// resourceVersion is what observe() compares. A lease taken over meanwhile is left to its new holder. Returns
  /// false, sending nothing, when not held. `clear`: annotations removed by the same request; others stay for
  /// the next holder (a record of unfinished work); `set`: annotations (string values) written by it.
  bool release(const std::vector<std::string>& clear = {}, const boost::json::object& set = {});
  /// Deletes the lease we hold (precondition: the resourceVersion of our last write), for a command that removes
  /// everything it made in the namespace. As release() when it was taken over meanwhile.
  bool remove();
  bool held() const { return held_; }
  /// The lease as last written or read.
  const LeaseRecord& record() const { return record_; }
  /// The lease as observe() read it (nullopt: absent, or observe() was not called).
  const std::optional<boost::json::object>& observed() const { return observed_lease_; }

 private:
  boost::json::object new_lease(std::int64_t now, const boost::json::object& annotations) const;
  boost::json::object take_patch(const LeaseRecord& seen, std::int64_t now,
                                 const boost::json::object& annotations) const;
  std::int64_t now_seconds() const;
  /// Notes a look at the lease (nullptr: absent); true when its record differs from the one observed before.
  bool note(const LeaseRecord* seen);
  /// The duration a lease held by someone else is judged by: its own, else ours.
  std::chrono::seconds duration_of(const LeaseRecord& seen) const;

  Client& client_;
  LeaseLockConfig config_;
  std::function<bool(const LeaseRecord&)> holder_gone_;
  LeaseClock clock_;
  bool held_ = false;
  LeaseRecord record_;
  std::chrono::steady_clock::time_point last_renewal_;  ///< when our last take or renewal was sent
  std::string seen_record_;  ///< the record last observed (holderIdentity, renewTime, resourceVersion); "" absent
  std::chrono::steady_clock::time_point seen_since_;  ///< since when it has been observed unchanged
  std::optional<std::string> observed_;  ///< resourceVersion seen by observe(); "" when the lease was absent
  std::optional<boost::json::object> observed_lease_;  ///< what observe() read
  int transitions_ = 0;
};

/// RFC 3339 with microseconds in UTC, as metav1.MicroTime is written: "2026-12-03T05:40:01.000000Z".
std::string micro_time(std::int64_t seconds_since_epoch);

}  // namespace mindie::kube
