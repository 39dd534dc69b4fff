#include "kube/object_diff.h"

namespace mindie::kube {

namespace json = boost::json;

namespace {

std::string text_at(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

json::object without_server_fields(json::object obj) {
  obj.erase("status");
  if (json::value* md = obj.if_contains("metadata"); md && md->is_object()) {
    json::object& m = md->get_object();
    for (const char* key : {"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink"})
      m.erase(key);
  }
  return obj;
}

std::string diff_file_name(const json::object& obj) {
  // apiVersion "apps/v1" -> "apps.v1", "v1" -> "v1": kubectl's "<group>.<version>" with the group left out when empty.
  std::string api_version = text_at(obj, "apiVersion");
  if (const auto slash = api_version.find('/'); slash != std::string::npos) api_version[slash] = '.';
  const json::value* md = obj.if_contains("metadata");
  const json::object empty;
  const json::object& m = md && md->is_object() ? md->get_object() : empty;
  return api_version + "." + text_at(obj, "kind") + "." + text_at(m, "namespace") + "." + text_at(m, "name");
}

}  // namespace mindie::kube
