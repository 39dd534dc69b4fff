// Helpers shared by the render_* and overrides_* unit tests: finding objects, roles, containers, volumes and mounts
// in rendered output.
#pragma once

#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kube/names.h"
#include "mindie/config.h"
#include "mindie/render.h"

namespace mindie::test {

inline bool is_str(const boost::json::value& v, std::string_view s) { return v.is_string() && v.get_string() == s; }

/// A copy of the first object of `kind` (callers may pass a temporary vector).
inline boost::json::object find_kind(const std::vector<boost::json::object>& objs, std::string_view kind) {
  for (const auto& o : objs)
    if (is_str(o.at("kind"), kind)) return o;
  throw std::runtime_error("no " + std::string(kind));
}

/// The InferServiceSet role named `name`.
inline const boost::json::object& role_of(const boost::json::object& iss, std::string_view name) {
  for (const auto& r : iss.at("spec").at("template").at("roles").as_array())
    if (is_str(r.at("name"), name)) return r.as_object();
  throw std::runtime_error("no role " + std::string(name));
}

inline const boost::json::object& pod_template_of(const boost::json::object& role) {
  return role.at("spec").at("template").as_object();
}
inline const boost::json::object& pod_spec_of(const boost::json::object& role) {
  return pod_template_of(role).at("spec").as_object();
}
inline const boost::json::object& container_of(const boost::json::object& role) {
  return pod_spec_of(role).at("containers").at(0).as_object();
}

/// The pod template's labels / annotations ({} when absent).
inline boost::json::object pod_labels_of(const boost::json::object& role) {
  const auto* l = pod_template_of(role).at("metadata").as_object().if_contains("labels");
  return l ? l->as_object() : boost::json::object();
}
inline boost::json::object pod_annotations_of(const boost::json::object& role) {
  const auto* a = pod_template_of(role).at("metadata").as_object().if_contains("annotations");
  return a ? a->as_object() : boost::json::object();
}

/// The env entry named `name` of the role's container (an empty object when absent).
inline boost::json::object env_entry(const boost::json::object& role, std::string_view name) {
  for (const auto& e : container_of(role).at("env").as_array())
    if (is_str(e.at("name"), name)) return e.as_object();
  return {};
}

/// Volumes by name; mounts by volume name.
inline std::map<std::string, boost::json::object> volumes_of(const boost::json::object& role) {
  std::map<std::string, boost::json::object> out;
  if (const auto* v = pod_spec_of(role).if_contains("volumes"))
    for (const auto& vol : v->as_array()) out[std::string(vol.at("name").as_string())] = vol.as_object();
  return out;
}
inline std::map<std::string, boost::json::object> mounts_of(const boost::json::object& role) {
  std::map<std::string, boost::json::object> out;
  if (const auto* m = container_of(role).if_contains("volumeMounts"))
    for (const auto& mount : m->as_array()) out[std::string(mount.at("name").as_string())] = mount.as_object();
  return out;
}

/// The InferServiceSet rendered from `cfg` with `opts`.
inline boost::json::object render_iss(const config::UserConfig& cfg, const render::RenderOptions& opts = {}) {
  return find_kind(render::render_infer_service_set(cfg, nullptr, opts), "InferServiceSet");
}

/// A Boost.JSON value as nlohmann::json (the type of the schema checker, support/openapi_schema.h).
inline nlohmann::json to_nlohmann(const boost::json::value& v) {
  return nlohmann::json::parse(boost::json::serialize(v));
}

/// CHECKs that every string in a "labels", "matchLabels", "selector" or "nodeSelector" map anywhere in `v` is a
/// valid label value (kube::is_label_value); `path` names `v` in failures.
inline void check_label_values(const boost::json::value& v, const std::string& path) {
  if (v.is_object()) {
    for (const auto& kv : v.as_object()) {
      const auto key = kv.key();
      if ((key == "labels" || key == "matchLabels" || key == "selector" || key == "nodeSelector") &&
          kv.value().is_object()) {
        for (const auto& l : kv.value().as_object()) {
          if (!l.value().is_string()) continue;  // a selector may hold matchLabels
          CAPTURE(path);
          CAPTURE(std::string(l.key()));
          CHECK(kube::is_label_value(l.value().as_string()));
        }
      }
      check_label_values(kv.value(), path + "." + std::string(key));
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.as_array().size(); ++i)
      check_label_values(v.as_array()[i], path + "[" + std::to_string(i) + "]");
  }
}

}  // namespace mindie::test
