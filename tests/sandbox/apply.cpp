#include "apply.h"

#include <algorithm>

namespace mindie::sandbox {

using nlohmann::json;

namespace {

// Set by the server, never owned by a manager (fieldmanager's stripMeta).
const std::set<std::string> kUnownedMetadata = {"name",           "namespace",         "uid",
                                                "resourceVersion", "generation",        "creationTimestamp",
                                                "managedFields",   "selfLink",          "deletionTimestamp",
                                                "deletionGracePeriodSeconds"};

void collect(const json& v, FieldPath& path, FieldSet& out) {
  if (v.is_null()) return;
  if (v.is_object() && !v.empty()) {
    for (const auto& [key, child] : v.items()) {
      path.push_back(key);
      collect(child, path, out);
      path.pop_back();
    }
    return;
  }
  if (!path.empty()) out.insert(path);
}

const json* value_at(const json& root, const FieldPath& path) {
  const json* cur = &root;
  for (const auto& key : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

bool in_scope(const FieldPath& p, OwnershipScope scope) {
  if (p.empty()) return false;
  if (p[0] == "apiVersion" || p[0] == "kind") return false;
  if (p[0] == "metadata" && (p.size() < 2 || kUnownedMetadata.count(p[1]))) return false;
  if (scope == OwnershipScope::Status) return p[0] == "status";
  if (scope == OwnershipScope::MainWithoutStatus) return p[0] != "status";
  return true;
}

// Equal, or one is an ancestor of the other: both describe the same part of the object.
bool related(const FieldPath& a, const FieldPath& b) {
  const std::size_t n = std::min(a.size(), b.size());
  return std::equal(a.begin(), a.begin() + n, b.begin());
}

bool same_manager(const ManagedEntry& e, const std::string& manager, const std::string& op,
                  const std::string& subresource) {
  return e.manager == manager && e.operation == op && e.subresource == subresource;
}

ManagedEntry& entry_for(std::vector<ManagedEntry>& entries, const Writer& w, const std::string& op) {
  for (auto& e : entries)
    if (same_manager(e, w.manager, op, w.subresource)) return e;
  entries.push_back({w.manager, op, w.api_version, w.now, w.subresource, {}});
  return entries.back();
}

void erase_path(json& root, const FieldPath& path) {
  if (path.empty()) return;
  std::vector<json*> chain{&root};
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    json* cur = chain.back();
    if (!cur->is_object() || !cur->contains(path[i])) return;
    chain.push_back(&(*cur)[path[i]]);
  }
  if (!chain.back()->is_object()) return;
  chain.back()->erase(path.back());
  // Drop parents the removal emptied, but keep top-level fields such as `spec`.
  for (std::size_t i = chain.size() - 1; i >= 2; --i) {
    if (!chain[i]->empty()) break;
    chain[i - 1]->erase(path[i - 1]);
  }
}

void set_path(json& root, const FieldPath& path, const json& value) {
  json* cur = &root;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    if (!cur->is_object()) *cur = json::object();
    cur = &(*cur)[path[i]];
  }
  if (!cur->is_object()) *cur = json::object();
  json& slot = (*cur)[path.back()];
  // An empty object in the config only asserts the object exists; it must not wipe what others set inside it.
  if (value.is_object() && value.empty() && slot.is_object()) return;
  slot = value;
}

std::string display(const ManagedEntry& e) {
  std::string s = "\"" + e.manager + "\"";
  if (!e.subresource.empty()) s += " with subresource \"" + e.subresource + "\"";
  // The manager identifier never includes the time (fieldmanager.BuildManagerIdentifier).
  if (e.operation == "Update") s += " using " + e.api_version;
  return s;
}

void drop_empty(std::vector<ManagedEntry>& entries) {
  entries.erase(std::remove_if(entries.begin(), entries.end(), [](const ManagedEntry& e) { return e.fields.empty(); }),
                entries.end());
}

}  // namespace

FieldSet owned_leaves(const json& object, OwnershipScope scope) {
  FieldSet all, out;
  FieldPath path;
  collect(object, path, all);
  for (const auto& p : all)
    if (in_scope(p, scope)) out.insert(p);
  return out;
}

json to_fields_v1(const FieldSet& fields) {
  json root = json::object();
  for (const auto& p : fields) {
    json* cur = &root;
    for (const auto& key : p) cur = &(*cur)["f:" + key];
    if (cur->is_null()) *cur = json::object();
  }
  return root;
}

namespace {

void from_fields_v1_rec(const json& node, FieldPath& path, FieldSet& out) {
  bool has_child = false;
  if (node.is_object()) {
    for (const auto& [key, child] : node.items()) {
      if (key.rfind("f:", 0) != 0) continue;  // "." and list-item keys (k:, v:, i:) own the node itself
      has_child = true;
      path.push_back(key.substr(2));
      from_fields_v1_rec(child, path, out);
      path.pop_back();
    }
  }
  if (!has_child && !path.empty()) out.insert(path);
}

}  // namespace

FieldSet from_fields_v1(const json& fields_v1) {
  FieldSet out;
  FieldPath path;
  from_fields_v1_rec(fields_v1, path, out);
  return out;
}

std::vector<ManagedEntry> read_managed(const json& object) {
  std::vector<ManagedEntry> out;
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) return out;
  const json& mf = object["metadata"].value("managedFields", json::array());
  if (!mf.is_array()) return out;
  for (const auto& e : mf) {
    if (!e.is_object()) continue;
    const auto str = [&](const char* k) { return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : ""; };
    out.push_back({str("manager"), str("operation"), str("apiVersion"), str("time"), str("subresource"),
                   from_fields_v1(e.value("fieldsV1", json::object()))});
  }
  return out;
}

void write_managed(json& object, const std::vector<ManagedEntry>& entries) {
  json arr = json::array();
  for (const auto& e : entries) {
    if (e.fields.empty()) continue;
    json j = {{"manager", e.manager}, {"operation", e.operation}, {"apiVersion", e.api_version},
              {"time", e.time},       {"fieldsType", "FieldsV1"},  {"fieldsV1", to_fields_v1(e.fields)}};
    if (!e.subresource.empty()) j["subresource"] = e.subresource;
    arr.push_back(std::move(j));
  }
  if (arr.empty()) object["metadata"].erase("managedFields");
  else object["metadata"]["managedFields"] = std::move(arr);
}

std::string path_string(const FieldPath& path) {
  std::string s;
  for (const auto& k : path) s += "." + k;
  return s;
}

void record_update(const json& before, json& updated, const Writer& writer) {
  std::vector<ManagedEntry> entries = read_managed(updated);
  FieldSet changed;
  for (const auto& p : owned_leaves(updated, writer.scope)) {
    const json* old = before.is_null() ? nullptr : value_at(before, p);
    if (!old || *old != *value_at(updated, p)) changed.insert(p);
  }
  for (auto& e : entries) {
    for (auto it = e.fields.begin(); it != e.fields.end();) {
      const bool gone = in_scope(*it, writer.scope) && value_at(updated, *it) == nullptr;
      const bool taken = std::any_of(changed.begin(), changed.end(), [&](const FieldPath& c) { return related(c, *it); });
      it = gone || taken ? e.fields.erase(it) : std::next(it);
    }
  }
  if (!changed.empty()) {
    ManagedEntry& mine = entry_for(entries, writer, "Update");
    mine.fields.insert(changed.begin(), changed.end());
    mine.time = writer.now;
    mine.api_version = writer.api_version;
  }
  drop_empty(entries);
  write_managed(updated, entries);
}

json server_side_apply(const json& live, const json& config, const Writer& writer, bool force,
                       std::vector<ApplyConflict>& conflicts) {
  const FieldSet applied = owned_leaves(config, writer.scope);
  std::vector<ManagedEntry> entries = read_managed(live);

  // Conflicts: another manager owns a field this config sets, and the value would change.
  std::vector<std::pair<std::size_t, FieldPath>> taken;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (same_manager(entries[i], writer.manager, "Apply", writer.subresource)) continue;
    for (const auto& owned : entries[i].fields) {
      for (const auto& p : applied) {
        if (!related(p, owned)) continue;
        const json* now = live.is_null() ? nullptr : value_at(live, p);
        if (now && *now == *value_at(config, p)) continue;
        taken.emplace_back(i, owned);
        break;
      }
    }
  }
  if (!taken.empty() && !force) {
    for (const auto& [i, path] : taken) conflicts.push_back({display(entries[i]), path});
    return nullptr;
  }
  for (const auto& [i, path] : taken) entries[i].fields.erase(path);

  json result = live.is_null() ? json::object() : live;
  if (live.is_null()) {
    for (const char* k : {"apiVersion", "kind"})
      if (config.contains(k)) result[k] = config[k];
    const json meta = config.value("metadata", json::object());
    for (const char* k : {"name", "namespace"})
      if (meta.is_object() && meta.contains(k)) result["metadata"][k] = meta[k];
  }

  // Fields this manager applied before and now omits are removed, unless someone else still owns them.
  ManagedEntry& mine = entry_for(entries, writer, "Apply");
  for (const auto& p : mine.fields) {
    if (std::any_of(applied.begin(), applied.end(), [&](const FieldPath& a) { return related(a, p); })) continue;
    const bool shared = std::any_of(entries.begin(), entries.end(), [&](const ManagedEntry& e) {
      return &e != &mine && std::any_of(e.fields.begin(), e.fields.end(), [&](const FieldPath& f) { return related(f, p); });
    });
    if (!shared) erase_path(result, p);
  }
  for (const auto& p : applied) set_path(result, p, *value_at(config, p));

  mine.fields = applied;
  mine.time = writer.now;
  mine.api_version = writer.api_version;
  drop_empty(entries);
  write_managed(result, entries);
  return result;
}

}  // namespace mindie::sandbox
