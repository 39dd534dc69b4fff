// The sandbox's in-memory object store: objects by (type, namespace, name) and one global resourceVersion
// counter, like etcd's revision behind kube-apiserver.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mindie::sandbox {

/// One committed change, kept so a watch can replay events after a resourceVersion.
struct StoreEvent {
  enum class Type { Added, Modified, Deleted };
  Type type;
  std::uint64_t resource_version;
  std::string type_key;  ///< ResourceType::key()
  nlohmann::json object;
};

/// Objects of every type. Not thread-safe: the API server serialises requests around it. Every write takes the next
/// resourceVersion from one counter and stamps it into metadata.resourceVersion (as a decimal string).
class Store {
 public:
  /// Events kept for replay; older ones are dropped (a watch from before them would get 410 Expired).
  static constexpr std::size_t kHistoryLimit = 10000;

  std::optional<nlohmann::json> get(const std::string& type_key, const std::string& ns, const std::string& name) const;
  /// Objects of a type ordered by (namespace, name); `ns` empty = all namespaces.
  std::vector<nlohmann::json> list(const std::string& type_key, const std::string& ns = "") const;
  /// Stores `object` (new or replacing), stamps a new resourceVersion and returns the stored object.
  nlohmann::json put(const std::string& type_key, nlohmann::json object);
  /// Removes an object; returns it (with the deletion's resourceVersion) or nullopt if it was absent.
  std::optional<nlohmann::json> remove(const std::string& type_key, const std::string& ns, const std::string& name);
  /// The latest resourceVersion handed out.
  std::uint64_t revision() const { return revision_; }
  /// Committed events with resource_version > `after`, oldest first; nullopt if history no longer reaches back.
  std::optional<std::vector<StoreEvent>> events_since(std::uint64_t after) const;
  /// Every stored object together with its type key (for cascading deletes by owner uid).
  std::vector<std::pair<std::string, nlohmann::json>> all() const;

 private:
  using Key = std::pair<std::string, std::string>;  // namespace, name
  std::map<std::string, std::map<Key, nlohmann::json>> objects_;
  std::uint64_t revision_ = 1;
  std::deque<StoreEvent> history_;

  void record(StoreEvent::Type type, const std::string& type_key, const nlohmann::json& object);
};

}  // namespace mindie::sandbox
