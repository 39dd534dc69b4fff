#include "resources.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

namespace mindie::sandbox {

using nlohmann::json;

namespace {

ResourceType make(std::string group, std::string plural, std::string singular, std::string kind, bool namespaced,
                  std::vector<std::string> short_names, bool status, GenerationPolicy gen) {
  ResourceType t;
  t.group = std::move(group);
  t.version = "v1";
  t.plural = std::move(plural);
  t.singular = std::move(singular);
  t.kind = std::move(kind);
  t.namespaced = namespaced;
  t.short_names = std::move(short_names);
  t.status_subresource = status;
  t.generation = gen;
  return t;
}

constexpr const char* kMindCluster = "mindcluster.huawei.com";

}  // namespace

Registry::Registry(bool with_mindcluster) {
  using G = GenerationPolicy;
  types_ = {
      make("", "namespaces", "namespace", "Namespace", false, {"ns"}, true, G::None),
      make("", "configmaps", "configmap", "ConfigMap", true, {"cm"}, false, G::None),
      make("", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}, false, G::None),
      make("", "services", "service", "Service", true, {"svc"}, true, G::None),
      make("", "pods", "pod", "Pod", true, {"po"}, true, G::None),
      make("", "events", "event", "Event", true, {"ev"}, false, G::None),
      make("apps", "deployments", "deployment", "Deployment", true, {"deploy"}, true, G::Spec),
      make("apps", "statefulsets", "statefulset", "StatefulSet", true, {"sts"}, true, G::Spec),
      make("apps", "replicasets", "replicaset", "ReplicaSet", true, {"rs"}, true, G::Spec),
      make("rbac.authorization.k8s.io", "clusterroles", "clusterrole", "ClusterRole", false, {}, false, G::None),
      make("rbac.authorization.k8s.io", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false,
           {}, false, G::None),
      make("rbac.authorization.k8s.io", "roles", "role", "Role", true, {}, false, G::None),
      make("rbac.authorization.k8s.io", "rolebindings", "rolebinding", "RoleBinding", true, {}, false, G::None),
  };
  if (with_mindcluster) {
    for (auto [plural, singular, kind, shorts] :
         {std::tuple{"inferservicesets", "inferserviceset", "InferServiceSet", "iss"},
          std::tuple{"inferservices", "inferservice", "InferService", "is"},
          std::tuple{"instancesets", "instanceset", "InstanceSet", "ist"}}) {
      ResourceType t = make(kMindCluster, plural, singular, kind, true, {shorts}, true, G::AllButStatus);
      t.custom = true;
      types_.push_back(std::move(t));
    }
  }
}

void Registry::add_crd(const std::string& group, const std::string& version, const std::string& kind,
                       const std::string& plural, bool namespaced, bool status_subresource, const json& schema) {
  for (auto& t : types_) {
    if (t.group == group && t.version == version && t.plural == plural) {
      t.schema = schema;
      return;
    }
  }
  ResourceType t;
  t.group = group;
  t.version = version;
  t.plural = plural;
  t.kind = kind;
  t.singular.reserve(kind.size());
  for (char c : kind) t.singular.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  t.namespaced = namespaced;
  t.status_subresource = status_subresource;
  t.custom = true;
  t.generation = GenerationPolicy::AllButStatus;
  t.schema = schema;
  types_.push_back(std::move(t));
}

const ResourceType* Registry::find(const std::string& group, const std::string& version,
                                   const std::string& plural) const {
  for (const auto& t : types_)
    if (t.group == group && t.version == version && t.plural == plural) return &t;
  return nullptr;
}

const ResourceType& Registry::by_kind(const std::string& api_version, const std::string& kind) const {
  for (const auto& t : types_)
    if (t.api_version() == api_version && t.kind == kind) return t;
  throw std::logic_error("type not served: " + api_version + " " + kind);
}

json Registry::api_versions() const {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}};
}

json Registry::group_list() const {
  json groups = json::array();
  std::set<std::string> seen;
  for (const auto& t : types_) {
    if (t.group.empty() || !seen.insert(t.group).second) continue;
    groups.push_back(*group(t.group));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

std::optional<json> Registry::group(const std::string& name) const {
  std::vector<std::string> versions;
  for (const auto& t : types_)
    if (t.group == name && std::find(versions.begin(), versions.end(), t.version) == versions.end())
      versions.push_back(t.version);
  if (name.empty() || versions.empty()) return std::nullopt;
  json vs = json::array();
  for (const auto& v : versions) vs.push_back({{"groupVersion", name + "/" + v}, {"version", v}});
  return json{{"kind", "APIGroup"},
              {"apiVersion", "v1"},
              {"name", name},
              {"versions", vs},
              {"preferredVersion", vs[0]}};
}

std::optional<json> Registry::resource_list(const std::string& group, const std::string& version) const {
  json resources = json::array();
  const json verbs = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
  for (const auto& t : types_) {
    if (t.group != group || t.version != version) continue;
    json r = {{"name", t.plural}, {"singularName", t.singular}, {"namespaced", t.namespaced},
              {"kind", t.kind},   {"verbs", verbs}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    resources.push_back(r);
    if (t.status_subresource)
      resources.push_back({{"name", t.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", t.namespaced},
                           {"kind", t.kind},
                           {"verbs", {"get", "patch", "update"}}});
  }
  if (resources.empty()) return std::nullopt;
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", group.empty() ? version : group + "/" + version},
              {"resources", resources}};
}

json Registry::openapi_v3_index() const {
  json paths = json::object();
  std::set<std::string> seen;
  for (const auto& t : types_) {
    const std::string gv = t.group.empty() ? "api/" + t.version : "apis/" + t.group + "/" + t.version;
    if (seen.insert(gv).second) paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv}};
  }
  return {{"paths", paths}};
}

std::optional<json> Registry::openapi_v3(const std::string& group, const std::string& version) const {
  const auto query_param = [](const char* name) {
    return json{{"name", name}, {"in", "query"}, {"schema", {{"type", "string"}}}, {"uniqueItems", true}};
  };
  const json write_params = {query_param("dryRun"), query_param("fieldManager"), query_param("fieldValidation")};
  json patch_params = write_params;
  patch_params.push_back(query_param("force"));
  const json ok = {{"200", {{"description", "OK"}}}};
  json paths = json::object(), schemas = json::object();
  for (const auto& t : types_) {
    if (t.group != group || t.version != version) continue;
    const json gvk = {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
    const auto op = [&](const std::string& action, const json& params) {
      return json{{"x-kubernetes-action", action}, {"x-kubernetes-group-version-kind", gvk},
                  {"parameters", params},           {"responses", ok}};
    };
    const std::string base = (t.group.empty() ? "/api/" : "/apis/" + t.group + "/") + t.version +
                             (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.plural;
    paths[base] = {{"get", op("list", json::array())}, {"post", op("post", write_params)}};
    paths[base + "/{name}"] = {{"get", op("get", json::array())},
                               {"put", op("put", write_params)},
                               {"patch", op("patch", patch_params)},
                               {"delete", op("delete", json::array({query_param("dryRun")}))}};
    if (t.status_subresource)
      paths[base + "/{name}/status"] = {{"get", op("get", json::array())},
                                        {"put", op("put", write_params)},
                                        {"patch", op("patch", patch_params)}};
    if (t.schema) {
      json s = *t.schema;
      s["x-kubernetes-group-version-kind"] = json::array({gvk});
      schemas[t.group + "." + t.version + "." + t.kind] = s;
    }
  }
  if (paths.empty()) return std::nullopt;
  return json{{"openapi", "3.0.0"},
              {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
              {"paths", paths},
              {"components", {{"schemas", schemas}}}};
}

}  // namespace mindie::sandbox
