#include "kube/csa_upgrade.h"

#include <string>
#include <vector>

namespace mindie::kube {

namespace json = boost::json;

namespace {

const json::object kEmpty;

const json::object& object_or_empty(const json::value* v) { return v && v->is_object() ? v->get_object() : kEmpty; }

std::string_view string_or_empty(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

bool is_entry(const json::value& e, std::string_view manager, std::string_view operation) {
  if (!e.is_object()) return false;
  const json::object& o = e.get_object();
  return string_or_empty(o, "manager") == manager && string_or_empty(o, "operation") == operation &&
         string_or_empty(o, "subresource").empty();
}

// Removes the path `keys` from the trie; a node left without children is removed too (an empty node would read as
// a member, which it was not). True when `node` itself became empty.
bool erase_path(json::object& node, const std::vector<std::string>& keys, std::size_t at) {
  auto it = node.find(keys[at]);
  if (it == node.end()) return false;
  if (at + 1 == keys.size() || !it->value().is_object()) {
    node.erase(it);
  } else if (erase_path(it->value().get_object(), keys, at + 1)) {
    node.erase(it);
  }
  return node.empty();
}

}  // namespace

json::object union_field_sets(const json::object& a, const json::object& b) {
  json::object out = a;
  for (const auto& kv : b) {
    json::value& mine = out[kv.key()];
    if (!mine.is_object()) mine = json::object();
    if (kv.value().is_object()) mine = union_field_sets(mine.get_object(), kv.value().get_object());
  }
  return out;
}

std::optional<json::array> csa_upgrade_patch(const json::object& live, std::string_view ssa_manager,
                                             std::string_view csa_manager) {
  const json::object& metadata = object_or_empty(live.if_contains("metadata"));
  const json::object& annotations = object_or_empty(metadata.if_contains("annotations"));
  const bool has_annotation = annotations.contains(kLastAppliedAnnotation);
  const json::value* mf = metadata.if_contains("managedFields");
  json::array entries = mf && mf->is_array() ? mf->get_array() : json::array();

  bool has_csa = false;
  for (const auto& e : entries) has_csa = has_csa || is_entry(e, csa_manager, "Update");
  if (!has_csa && !has_annotation) return std::nullopt;

  if (has_csa) {
    std::size_t target = entries.size();
    for (std::size_t i = 0; i < entries.size() && target == entries.size(); ++i)
      if (is_entry(entries[i], ssa_manager, "Apply")) target = i;
    if (target == entries.size()) {
      // No Apply entry yet: the newest client-side entry (managedFields are newest first) becomes it.
      for (std::size_t i = 0; i < entries.size() && target == entries.size(); ++i)
        if (is_entry(entries[i], csa_manager, "Update")) target = i;
      json::object& t = entries[target].get_object();
      t["manager"] = ssa_manager;
      t["operation"] = "Apply";
    }
    json::object& t = entries[target].get_object();
    json::object fields = object_or_empty(t.if_contains("fieldsV1"));
    const std::string_view api_version = string_or_empty(t, "apiVersion");
    for (const auto& e : entries)
      if (is_entry(e, csa_manager, "Update") && string_or_empty(e.get_object(), "apiVersion") == api_version) {
        fields = union_field_sets(fields, object_or_empty(e.get_object().if_contains("fieldsV1")));
        break;
      }
    // The annotation goes with the client-side manager: nobody may keep it alive by owning it.
    erase_path(fields, {"f:metadata", "f:annotations", std::string("f:") + kLastAppliedAnnotation}, 0);
    t["fieldsType"] = "FieldsV1";
    t["fieldsV1"] = std::move(fields);
    json::array kept;
    for (auto& e : entries)
      if (!is_entry(e, csa_manager, "Update")) kept.push_back(std::move(e));
    entries = std::move(kept);
  }

  json::array patch;
  patch.push_back(json::object{
      {"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", string_or_empty(metadata, "resourceVersion")}});
  if (has_csa)
    patch.push_back(json::object{{"op", "replace"}, {"path", "/metadata/managedFields"}, {"value", entries}});
  // '/' in the annotation key is "~1" in a JSON Pointer (RFC 6901).
  if (has_annotation)
    patch.push_back(json::object{{"op", "remove"},
                                 {"path", "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}});
  return patch;
}

}  // namespace mindie::kube
