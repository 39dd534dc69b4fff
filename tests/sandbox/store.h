// The sandbox's in-memory object store: objects by (type, namespace, name) and one global resourceVersion
// counter, like etcd's revision behind kube-apiserver.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace mindie::sandbox {

/// A stored object version. Versions are immutable and shared between the current state and the history, so a
/// watch replaying thousands of events copies no JSON.
using ObjectPtr = std::shared_ptr<const nlohmann::json>;

/// One committed change, kept so a watch can replay events after a resourceVersion.
struct StoreEvent {
  enum class Type { Added, Modified, Deleted };
  Type type;
  std::uint64_t resource_version;
  std::string type_key;  ///< ResourceType::key()
  ObjectPtr object;      ///< the new state; for Deleted the last state, stamped with the deletion's resourceVersion
  ObjectPtr previous;    ///< the state before the change (null for Added): watches with selectors need it
};

/// Where an object lives: type key, namespace, name.
using ObjectRef = std::tuple<std::string, std::string, std::string>;

/// Objects of every type. Not thread-safe: the API server serialises requests around it. Every write takes the next
/// resourceVersion from one counter and stamps it into metadata.resourceVersion (as a decimal string).
class Store {
 public:
  /// Events kept for replay; older ones are dropped (a watch from before them gets 410 Expired).
  static constexpr std::size_t kHistoryLimit = 10000;

  std::optional<nlohmann::json> get(const std::string& type_key, const std::string& ns, const std::string& name) const;
  /// The stored object without copying it, nullptr if absent. Valid until the next write.
  const nlohmann::json* find(const std::string& type_key, const std::string& ns, const std::string& name) const;
  /// The stored version itself (shared, immutable: it stays valid across later writes), null if absent.
  ObjectPtr find_ptr(const std::string& type_key, const std::string& ns, const std::string& name) const;
  /// Objects of a type ordered by (namespace, name); `ns` empty = all namespaces.
  std::vector<nlohmann::json> list(const std::string& type_key, const std::string& ns = "") const;
  /// Visits objects of a type in (namespace, name) order without copying them, starting after `after` (an empty
  /// pair starts at the beginning) and restricted to `ns` unless it is empty, until `visit` returns false.
  void scan(const std::string& type_key, const std::string& ns, const std::pair<std::string, std::string>& after,
            const std::function<bool(const ObjectPtr&)>& visit) const;
  /// Stores `object` (new or replacing), stamps a new resourceVersion and returns the stored object.
  nlohmann::json put(const std::string& type_key, nlohmann::json object);
  /// Removes an object; returns it (with the deletion's resourceVersion) or nullopt if it was absent.
  std::optional<nlohmann::json> remove(const std::string& type_key, const std::string& ns, const std::string& name);
  /// The latest resourceVersion handed out.
  std::uint64_t revision() const { return revision_; }
  /// Committed events with resource_version > `after`, oldest first; nullopt if history no longer reaches back.
  std::optional<std::vector<StoreEvent>> events_since(std::uint64_t after) const;
  /// The oldest resourceVersion a watch can still start from (kube-apiserver's "oldest-1" in its 410 message).
  std::uint64_t oldest_watchable() const;
  /// Drops the whole change history, as an etcd compaction up to the current revision does: later watches from
  /// any older resourceVersion get 410 Expired.
  void compact() { history_.clear(); }
  /// Objects whose metadata.ownerReferences name `owner_uid` (the garbage collector's dependents graph).
  std::vector<ObjectRef> dependents(const std::string& owner_uid) const;
  /// Every stored object together with its type key.
  std::vector<std::pair<std::string, nlohmann::json>> all() const;
  /// Called with every change as it is committed (the API server feeds its watches from it, so a request that makes
  /// more changes than the history keeps still reaches them all).
  void set_observer(std::function<void(const StoreEvent&)> observer) { observer_ = std::move(observer); }

 private:
  using Key = std::pair<std::string, std::string>;  // namespace, name
  std::map<std::string, std::map<Key, ObjectPtr>> objects_;
  std::map<std::string, std::set<ObjectRef>> dependents_;  // owner uid -> dependents
  std::uint64_t revision_ = 1;
  std::deque<StoreEvent> history_;
  std::function<void(const StoreEvent&)> observer_;

  void record(StoreEvent::Type type, const std::string& type_key, ObjectPtr object, ObjectPtr previous);
  void index_owners(const std::string& type_key, const nlohmann::json& object, bool add);
};

}  // namespace mindie::sandbox
