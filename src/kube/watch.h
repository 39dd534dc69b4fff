// An informer-style cache over list + watch, in the manner of client-go's Reflector: LIST (paged), then WATCH from
// the list's resourceVersion with bookmarks, re-watch from the last seen resourceVersion when the server ends a
// watch or the connection drops, re-LIST when that version is too old (410). Knows the API, nothing of MindIE.
#pragma once

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/transport.h"

namespace mindie::kube {

/// One collection to keep in the cache: resource, namespace ("" = all namespaces, or cluster-scoped) and the
/// selectors sent with both the LIST and the WATCH (API concepts "Efficient detection of changes").
struct WatchTarget {
  GVR gvr;
  std::string ns;
  std::string label_selector;
  std::string field_selector;
};

/// Tuning of an Informer. The defaults follow client-go's Reflector where it has one.
struct InformerOptions {
  /// Each WATCH asks for timeoutSeconds in [min_watch_timeout, 2 · min_watch_timeout), spread at random so that
  /// many watchers do not reconnect together (Reflector: 5 minutes).
  std::chrono::seconds min_watch_timeout{300};
  /// LIST page size (limit/continue); <= 0 lists in one request.
  int list_page_size = 500;
  /// Backoff between failed attempts: initial_backoff · 2^(n-1) · (1 + 0.5 · random), at most max_backoff
  /// (Reflector: 800 ms doubling to 30 s).
  std::chrono::milliseconds initial_backoff{800};
  std::chrono::milliseconds max_backoff{30000};
  /// A target whose attempts have failed (connection failures, 429/5xx) for at least this long, over two attempts
  /// or more, gives up: its last error becomes fatal.
  std::chrono::milliseconds give_up_after{60000};
  /// A watch that ended without any event counts as a failed attempt for the backoff (a server closing watches
  /// at once must not make us busy-loop) unless it lasted at least this long.
  std::chrono::milliseconds min_quiet_watch{10000};
  /// Yields values in [0, 1) for timeoutSeconds and jitter; empty: a generator seeded from std::random_device.
  std::function<double()> random;
  /// Told of every backoff wait before it starts (target index, duration); for tests and logs. Called on the
  /// target's thread.
  std::function<void(std::size_t target, std::chrono::milliseconds wait)> on_backoff;
};

/// Keeps the objects of several WatchTargets current: start() LISTs each target (paged, via Client::list) and
/// then watches it on a thread of its own, from the list's resourceVersion, with
/// `?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=N[&labelSelector=..][&fieldSelector=..]`.
///
/// Events: ADDED and MODIFIED insert or replace the object (keyed by namespace/name), DELETED removes it, BOOKMARK
/// only advances the resourceVersion; every event's metadata.resourceVersion becomes the one to resume from.
/// ERROR 410 (Expired/Gone), or a WATCH answered 410, re-LISTs (the cache is replaced whole, so deletions missed
/// meanwhile disappear) and watches from the new list's resourceVersion. The server ending a watch (its timeout)
/// or the connection breaking re-watches from the last resourceVersion seen; repeated failures wait a capped
/// exponential backoff (InformerOptions). Fatal, and rethrown by wait_for_change(): any other error answer or
/// ERROR event (403, 404, 400, ...; 429/5xx are retried like connection failures), attempts failing for longer
/// than give_up_after, a malformed event line (std::runtime_error naming the watch and quoting the line), or any
/// other exception. A fatal error ends that target's thread; the others keep running until stop().
///
/// Threading: each target owns one transport from the factory (created in start(), used for its LISTs and
/// WATCHes, on the caller's thread during start() and on the target's thread afterwards). The cache is guarded
/// by a mutex; every public method is thread-safe. stop() aborts streams at the sink's next call (libcurl gives an
/// idle call about once a second) and interrupts backoff waits at once; a re-LIST in flight is waited for.
class Informer {
 public:
  /// Makes one transport per target (called |targets| times by start(), on the caller's thread).
  using TransportFactory = std::function<std::unique_ptr<HttpTransport>()>;

  Informer(TransportFactory factory, std::vector<WatchTarget> targets, InformerOptions options = {});
  /// Stops (see stop()).
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  /// LISTs every target in order, then starts the watch threads. Throws ApiError / TransportError /
  /// std::runtime_error from the first LIST that fails (no thread is started then), std::logic_error when
  /// called twice. The initial LISTs do not count as a change for wait_for_change().
  void start();
  /// Blocks until the cache has changed since the last call (true; a re-LIST counts only when it changed
  /// something), or until `deadline` passes or stop() is called (false). Rethrows a fatal error of any target,
  /// on this and every later call.
  bool wait_for_change(std::chrono::steady_clock::time_point deadline);
  /// A copy of target `target`'s objects, ordered by namespace, then name. Throws std::out_of_range for a bad
  /// index.
  std::vector<boost::json::object> objects(std::size_t target) const;
  /// The resourceVersion target `target` would resume watching from (the list's, then the last event's).
  std::string resource_version(std::size_t target) const;
  /// Stops every watch and joins the threads; idempotent. Cached objects stay readable. Not to be called from
  /// InformerOptions::on_backoff (a target's own thread).
  void stop();
  /// LIST pages and WATCH requests sent so far (each stream() call counts once, whatever the retries below it).
  std::size_t requests_sent() const { return requests_.load(); }

 private:
  struct Target;
  // How a WATCH ended: after events, without any, with 410 (re-LIST), or by stop().
  enum class Outcome { Events, Quiet, Expired, Stopped };

  void run(std::size_t index);
  void relist(std::size_t index);
  // One WATCH from the target's resourceVersion; `any` tells whether it delivered an event (also when it throws).
  Outcome watch_once(std::size_t index, bool& any);
  void handle_line(std::size_t index, const HttpRequest& req, std::string_view line, bool& expired, bool& any);
  void set_fatal(std::exception_ptr error);
  // Waits `wait` unless stop() comes first; false when stopping.
  bool pause(std::size_t index, std::chrono::milliseconds wait);
  std::chrono::milliseconds backoff(int failures);

  TransportFactory factory_;
  InformerOptions options_;
  std::vector<std::unique_ptr<Target>> targets_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> requests_{0};
  bool started_ = false;

  std::mutex join_mu_;
  mutable std::mutex mu_;  // guards the caches, resource versions, changed_, fatal_ and random_
  std::condition_variable cv_;
  bool changed_ = false;
  std::exception_ptr fatal_;
};

/// The WATCH path for `target` from `resource_version` ("" omits it: the server then replays the current state
/// as ADDED events first): Client::path + `?watch=true[&resourceVersion=..]&allowWatchBookmarks=true&
/// timeoutSeconds=N[&labelSelector=..][&fieldSelector=..]`, values percent-encoded.
std::string watch_path(const WatchTarget& target, std::string_view resource_version, long timeout_seconds);

}  // namespace mindie::kube
