// Field ownership (metadata.managedFields) and server-side apply, after
// k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager. Simplification: every list is atomic (owned whole, as a
// list without x-kubernetes-list-type is), so field sets are sets of leaf paths.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace mindie::sandbox {

/// A path of object keys from the root; leaves are scalars, lists and empty objects.
using FieldPath = std::vector<std::string>;
using FieldSet = std::set<FieldPath>;

/// Which paths a write may own: the main resource of a type with a status subresource does not own `status`, the
/// status subresource owns only `status`; identity and server-set metadata are never owned.
enum class OwnershipScope { Main, MainWithoutStatus, Status };

/// One managedFields entry. Managers are told apart by (manager, operation, subresource).
struct ManagedEntry {
  std::string manager;
  std::string operation;  ///< "Apply" or "Update"
  std::string api_version;
  std::string time;
  std::string subresource;  ///< "" or "status"
  FieldSet fields;
};

/// The leaf paths present in `object` that `scope` may own.
FieldSet owned_leaves(const nlohmann::json& object, OwnershipScope scope);
/// FieldsV1 encoding ({"f:spec":{"f:replicas":{}}}) and back.
nlohmann::json to_fields_v1(const FieldSet& fields);
FieldSet from_fields_v1(const nlohmann::json& fields_v1);
/// metadata.managedFields of `object` parsed (malformed entries are skipped) and written back (empty → removed).
std::vector<ManagedEntry> read_managed(const nlohmann::json& object);
void write_managed(nlohmann::json& object, const std::vector<ManagedEntry>& entries);
/// `.spec.template.roles` — the notation conflict messages use.
std::string path_string(const FieldPath& path);

/// Who is writing: manager name, API version used, current time (RFC 3339) and subresource.
struct Writer {
  std::string manager;
  std::string api_version;
  std::string now;
  std::string subresource;  ///< "" or "status"
  OwnershipScope scope = OwnershipScope::Main;
};

/// Records a non-apply write (create, PUT, JSON/merge/strategic patch) in `updated`'s managedFields: fields whose
/// value it set or changed move to the writer's Update entry; removed fields are dropped from every entry.
/// `before` is the previous object (null on create); `updated` carries the previous managedFields on entry.
void record_update(const nlohmann::json& before, nlohmann::json& updated, const Writer& writer);

/// One SSA conflict: a field the applied config sets to a different value than `manager` (its owner) left.
struct ApplyConflict {
  std::string manager_display;  ///< `"kubectl"` or `"x" using v1 at <time>` as printed by kube-apiserver
  FieldPath path;
};

/// Server-side apply of `config` (the full intended object) onto `live` (null when creating). Returns the merged
/// object with updated managedFields. Fields the writer applied before and now omits are removed unless another
/// manager owns them. With `force` false, fields owned by others with different values are conflicts: they are
/// returned in `conflicts` and the result must not be stored. With `force` they are taken over.
nlohmann::json server_side_apply(const nlohmann::json& live, const nlohmann::json& config, const Writer& writer,
                                 bool force, std::vector<ApplyConflict>& conflicts);

}  // namespace mindie::sandbox
