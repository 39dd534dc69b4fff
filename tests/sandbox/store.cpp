#include "store.h"

namespace mindie::sandbox {

using nlohmann::json;

namespace {

std::string meta_field(const json& o, const char* key) {
  if (!o.contains("metadata") || !o["metadata"].is_object()) return "";
  const json& m = o["metadata"];
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "";
}

}  // namespace

std::optional<json> Store::get(const std::string& type_key, const std::string& ns, const std::string& name) const {
  const json* o = find(type_key, ns, name);
  if (!o) return std::nullopt;
  return *o;
}

const json* Store::find(const std::string& type_key, const std::string& ns, const std::string& name) const {
  return find_ptr(type_key, ns, name).get();
}

ObjectPtr Store::find_ptr(const std::string& type_key, const std::string& ns, const std::string& name) const {
  auto t = objects_.find(type_key);
  if (t == objects_.end()) return nullptr;
  auto o = t->second.find({ns, name});
  return o == t->second.end() ? nullptr : o->second;
}

std::vector<json> Store::list(const std::string& type_key, const std::string& ns) const {
  std::vector<json> out;
  scan(type_key, ns, {}, [&](const ObjectPtr& o) {
    out.push_back(*o);
    return true;
  });
  return out;
}

void Store::scan(const std::string& type_key, const std::string& ns, const std::pair<std::string, std::string>& after,
                 const std::function<bool(const ObjectPtr&)>& visit) const {
  auto t = objects_.find(type_key);
  if (t == objects_.end()) return;
  const auto& objs = t->second;
  // Keys sort by (namespace, name), so a namespace's objects are one range.
  auto it = after.first.empty() && after.second.empty() ? objs.begin() : objs.upper_bound(after);
  if (!ns.empty() && (it == objs.end() || it->first.first < ns)) it = objs.lower_bound({ns, ""});
  for (; it != objs.end(); ++it) {
    if (!ns.empty() && it->first.first != ns) break;
    if (!visit(it->second)) break;
  }
}

json Store::put(const std::string& type_key, json object) {
  object["metadata"]["resourceVersion"] = std::to_string(++revision_);
  auto stored = std::make_shared<const json>(std::move(object));
  auto& slot = objects_[type_key][{meta_field(*stored, "namespace"), meta_field(*stored, "name")}];
  ObjectPtr previous = std::move(slot);
  if (previous) index_owners(type_key, *previous, false);
  index_owners(type_key, *stored, true);
  slot = stored;
  const auto type = previous ? StoreEvent::Type::Modified : StoreEvent::Type::Added;
  record(type, type_key, stored, std::move(previous));
  return *stored;
}

std::optional<json> Store::remove(const std::string& type_key, const std::string& ns, const std::string& name) {
  auto t = objects_.find(type_key);
  if (t == objects_.end()) return std::nullopt;
  auto o = t->second.find({ns, name});
  if (o == t->second.end()) return std::nullopt;
  ObjectPtr previous = std::move(o->second);
  t->second.erase(o);
  index_owners(type_key, *previous, false);
  json object = *previous;
  object["metadata"]["resourceVersion"] = std::to_string(++revision_);
  record(StoreEvent::Type::Deleted, type_key, std::make_shared<const json>(object), std::move(previous));
  return object;
}

std::optional<std::vector<StoreEvent>> Store::events_since(std::uint64_t after) const {
  if (after < oldest_watchable()) return std::nullopt;
  std::vector<StoreEvent> out;
  // History is ordered by resourceVersion: skip from the back to the first newer event.
  auto it = history_.end();
  while (it != history_.begin() && std::prev(it)->resource_version > after) --it;
  out.assign(it, history_.end());
  return out;
}

std::uint64_t Store::oldest_watchable() const {
  return history_.empty() ? revision_ : history_.front().resource_version - 1;
}

std::vector<ObjectRef> Store::dependents(const std::string& owner_uid) const {
  auto it = dependents_.find(owner_uid);
  if (it == dependents_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::vector<std::pair<std::string, json>> Store::all() const {
  std::vector<std::pair<std::string, json>> out;
  for (const auto& [type_key, objs] : objects_)
    for (const auto& [key, obj] : objs) out.emplace_back(type_key, *obj);
  return out;
}

void Store::record(StoreEvent::Type type, const std::string& type_key, ObjectPtr object, ObjectPtr previous) {
  history_.push_back({type, revision_, type_key, std::move(object), std::move(previous)});
  if (history_.size() > kHistoryLimit) history_.pop_front();
  if (observer_) observer_(history_.back());
}

void Store::index_owners(const std::string& type_key, const json& object, bool add) {
  const json& meta = object["metadata"];
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return;
  const ObjectRef ref{type_key, meta_field(object, "namespace"), meta_field(object, "name")};
  for (const auto& r : meta["ownerReferences"]) {
    if (!r.is_object() || !r.contains("uid") || !r["uid"].is_string()) continue;
    const std::string uid = r["uid"];
    if (add) {
      dependents_[uid].insert(ref);
    } else if (auto it = dependents_.find(uid); it != dependents_.end()) {
      it->second.erase(ref);
      if (it->second.empty()) dependents_.erase(it);
    }
  }
}

}  // namespace mindie::sandbox
