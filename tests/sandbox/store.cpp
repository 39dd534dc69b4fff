#include "store.h"

namespace mindie::sandbox {

using nlohmann::json;

namespace {

std::string ns_of(const json& o) { return o["metadata"].value("namespace", ""); }
std::string name_of(const json& o) { return o["metadata"].value("name", ""); }

}  // namespace

std::optional<json> Store::get(const std::string& type_key, const std::string& ns, const std::string& name) const {
  auto t = objects_.find(type_key);
  if (t == objects_.end()) return std::nullopt;
  auto o = t->second.find({ns, name});
  if (o == t->second.end()) return std::nullopt;
  return o->second;
}

std::vector<json> Store::list(const std::string& type_key, const std::string& ns) const {
  std::vector<json> out;
  auto t = objects_.find(type_key);
  if (t == objects_.end()) return out;
  for (const auto& [key, obj] : t->second)
    if (ns.empty() || key.first == ns) out.push_back(obj);
  return out;
}

json Store::put(const std::string& type_key, json object) {
  object["metadata"]["resourceVersion"] = std::to_string(++revision_);
  auto& slot = objects_[type_key][{ns_of(object), name_of(object)}];
  const bool existed = !slot.is_null();
  slot = object;
  record(existed ? StoreEvent::Type::Modified : StoreEvent::Type::Added, type_key, object);
  return object;
}

std::optional<json> Store::remove(const std::string& type_key, const std::string& ns, const std::string& name) {
  auto t = objects_.find(type_key);
  if (t == objects_.end()) return std::nullopt;
  auto o = t->second.find({ns, name});
  if (o == t->second.end()) return std::nullopt;
  json object = std::move(o->second);
  t->second.erase(o);
  object["metadata"]["resourceVersion"] = std::to_string(++revision_);
  record(StoreEvent::Type::Deleted, type_key, object);
  return object;
}

std::optional<std::vector<StoreEvent>> Store::events_since(std::uint64_t after) const {
  if (after < revision_ && (history_.empty() || history_.front().resource_version > after + 1)) return std::nullopt;
  std::vector<StoreEvent> out;
  for (const auto& e : history_)
    if (e.resource_version > after) out.push_back(e);
  return out;
}

std::vector<std::pair<std::string, json>> Store::all() const {
  std::vector<std::pair<std::string, json>> out;
  for (const auto& [type_key, objs] : objects_)
    for (const auto& [key, obj] : objs) out.emplace_back(type_key, obj);
  return out;
}

void Store::record(StoreEvent::Type type, const std::string& type_key, const json& object) {
  history_.push_back({type, revision_, type_key, object});
  if (history_.size() > kHistoryLimit) history_.pop_front();
}

}  // namespace mindie::sandbox
