// The resource types the sandbox serves and the discovery documents describing them (/api, /apis, /api/v1, ...).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api_error.h"

namespace mindie::sandbox {

/// When metadata.generation changes (each type's registry strategy in kube-apiserver decides).
enum class GenerationPolicy {
  None,          ///< no generation at all (ConfigMap, ServiceAccount, Service, RBAC, ...)
  Spec,          ///< starts at 1, bumps when `spec` changes (Deployment, StatefulSet)
  AllButStatus,  ///< custom resources: any change outside metadata and status
};

/// One served resource type (an APIResource plus the behaviour the sandbox needs to know).
struct ResourceType {
  std::string group;  ///< "" for the core group
  std::string version;
  std::string plural;
  std::string singular;
  std::string kind;
  bool namespaced = true;
  std::vector<std::string> short_names;
  bool status_subresource = false;
  bool custom = false;  ///< a CRD-defined type: no strategic merge patch, PUT needs resourceVersion
  GenerationPolicy generation = GenerationPolicy::None;
  std::optional<nlohmann::json> schema;  ///< openAPIV3Schema when loaded with --crd

  /// "v1" or "group/version".
  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  /// Store key of the type: "group/plural".
  std::string key() const { return group + "/" + plural; }
  ErrorTarget target(const std::string& name) const { return {group, plural, kind, name}; }
};

/// All served types: the built-in ones and, unless disabled, the mindcluster.huawei.com custom resources.
class Registry {
 public:
  /// `with_mindcluster`: serve InferServiceSet/InferService/InstanceSet (false for --no-crd).
  explicit Registry(bool with_mindcluster);

  /// Attaches an openAPIV3Schema (from --crd) to a served custom type, registering it when it is new.
  void add_crd(const std::string& group, const std::string& version, const std::string& kind,
               const std::string& plural, bool namespaced, bool status_subresource, const nlohmann::json& schema);

  /// The type served at group/version/plural, nullptr if none.
  const ResourceType* find(const std::string& group, const std::string& version, const std::string& plural) const;
  /// The core or named type of the given kind (used by the operator simulator and cascading deletes).
  const ResourceType& by_kind(const std::string& api_version, const std::string& kind) const;
  const std::vector<ResourceType>& all() const { return types_; }

  /// GET /api (APIVersions).
  nlohmann::json api_versions() const;
  /// GET /apis (APIGroupList, named groups only).
  nlohmann::json group_list() const;
  /// GET /apis/{group} (APIGroup), nullopt when the group is not served.
  std::optional<nlohmann::json> group(const std::string& name) const;
  /// GET /api/v1 or /apis/{g}/{v} (APIResourceList), nullopt when not served.
  std::optional<nlohmann::json> resource_list(const std::string& group, const std::string& version) const;
  /// GET /openapi/v3: the index of per-group-version documents.
  nlohmann::json openapi_v3_index() const;
  /// GET /openapi/v3/api/v1 or /openapi/v3/apis/{g}/{v}: paths with x-kubernetes-group-version-kind and the query
  /// parameters of each operation (kubectl reads it to learn that fieldValidation is server-side), and the CRD
  /// schemas loaded with --crd. nullopt when the group/version is not served.
  std::optional<nlohmann::json> openapi_v3(const std::string& group, const std::string& version) const;

 private:
  std::vector<ResourceType> types_;
};

}  // namespace mindie::sandbox
