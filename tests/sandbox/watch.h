// Watches (GET <collection>?watch=1), after kube-apiserver's watch cache (k8s.io/apiserver/pkg/storage/cacher):
// every committed change is pushed to each open watch that selects it, as one JSON line
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}. The API server fills a Watch under its request lock;
// the HTTP layer drains it from its own thread, so an open watch never holds that lock while it waits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "label_selector.h"
#include "store.h"

namespace mindie::sandbox {

/// What one watch selects and how it presents objects.
struct WatchSpec {
  std::string type_key;     ///< ResourceType::key()
  std::string kind;         ///< for BOOKMARK objects and Tables
  std::string api_version;  ///< for BOOKMARK objects
  std::string ns;           ///< "" = all namespaces
  LabelSelector labels;
  FieldSelector fields;
  bool bookmarks = false;  ///< allowWatchBookmarks=true
  bool as_table = false;   ///< Accept: ...;as=Table (kubectl get -w): objects become one-row Tables
  /// Changes up to this revision are not the watch's business (it started there, or from the initial state).
  std::uint64_t after_revision = 0;
};

/// Whether `object` is in the watch's namespace and matches its selectors.
bool watch_selects(const WatchSpec& spec, const nlohmann::json& object);

/// One event queued for a watcher.
struct WatchEvent {
  enum class Type { Added, Modified, Deleted };
  Type type;
  ObjectPtr object;
  /// Non-empty: send the object with this metadata.resourceVersion (an object leaving the selector is sent as
  /// DELETED with its previous content but the change's resourceVersion, as the cacher does).
  std::string resource_version;
};

/// The event a store change means for a watch, nullopt when none (cacheWatcher.convertToWatchEvent): matching
/// before and after → MODIFIED; only after → ADDED; only before (or deleted) → DELETED with the previous content.
std::optional<WatchEvent> watch_event_for(const StoreEvent& change, const WatchSpec& spec);

/// The line kube-apiserver streams for one event: {"type":TYPE,"object":OBJECT} and a newline.
std::string watch_line(const std::string& type, const nlohmann::json& object);

/// One open watch: a queue of events, bookmarks and the end of the stream. Thread-safe.
class Watch {
 public:
  using Clock = std::chrono::steady_clock;

  /// `deadline`: when the server ends the stream (timeoutSeconds); `bookmark_interval`: how often a BOOKMARK goes
  /// out when spec.bookmarks (kube-apiserver: about once a minute; the sandbox's --bookmark-interval); `start`: now.
  Watch(WatchSpec spec, Clock::time_point start, Clock::time_point deadline, Clock::duration bookmark_interval);

  const WatchSpec& spec() const { return spec_; }

  // The producer: the API server, under its request lock.

  /// Queues an event (a watcher that falls more than kMaxQueued events behind is dropped, as the cacher drops
  /// watchers that do not keep up).
  void push(WatchEvent event);
  /// The store's revision once every change up to it has been pushed: the resourceVersion of the next BOOKMARK.
  void advance(std::uint64_t revision);
  /// Queues the BOOKMARK that ends the initial events of sendInitialEvents=true (annotation
  /// k8s.io/initial-events-end: "true").
  void push_initial_events_end(std::uint64_t revision);
  /// Queues an ERROR event carrying `status`; the stream then ends normally.
  void fail(const nlohmann::json& status);
  /// Ends the stream abruptly: the connection is dropped without the final chunk (close-watches, shutdown).
  void abort();
  /// The HTTP side has gone (connection closed): the server may forget this watch.
  void abandon();
  /// Aborted, ended or abandoned.
  bool done() const;

  // The consumer: the HTTP layer's thread for this connection.

  enum class Step { Continue, End, Abort };
  /// Non-blocking: appends every queued line to `out`, and a BOOKMARK when one is due at `now`. End once the
  /// deadline has passed or after an ERROR (the final chunk follows); Abort when aborted (nothing is appended).
  Step take(std::string& out, Clock::time_point now);
  /// Waits until there is something to send, a bookmark or the deadline is due, the watch is aborted, or
  /// `max_wait` has passed; then take().
  Step next(std::string& out, Clock::duration max_wait);

  static constexpr std::size_t kMaxQueued = 100000;

 private:
  struct Queued {
    std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
    ObjectPtr object;
    std::string resource_version;
  };

  const WatchSpec spec_;
  const Clock::time_point deadline_;
  const Clock::duration bookmark_interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> queue_;
  Clock::time_point next_bookmark_;
  std::uint64_t revision_ = 0;
  bool columns_sent_ = false;
  bool ending_ = false;     // an ERROR is queued: end after it
  bool ended_ = false;      // the last take() said End
  bool aborted_ = false;
  bool abandoned_ = false;

  void render(const Queued& q, std::string& out);
};

}  // namespace mindie::sandbox
