// Taking over an object that client-side `kubectl apply` wrote, so that server-side apply can manage all of it:
// the fields the client-side manager owns are handed to the server-side apply manager, as `kubectl apply
// --server-side` does on its first run over such an object (k8s.io/client-go util/csaupgrade). Without it the
// fields the new manager stops sending would stay, owned by nobody who will ever remove them. Pure: objects in,
// a JSON patch out.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string_view>

namespace mindie::kube {

/// The field manager client-side `kubectl apply` records its writes under (operation Update).
inline constexpr const char* kClientSideApplyManager = "kubectl-client-side-apply";
/// The annotation client-side `kubectl apply` keeps its last applied configuration in.
inline constexpr const char* kLastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration";

/// The union of two FieldsV1 sets (managedFields[].fieldsV1: a trie of "f:", "k:", "v:", "i:" keys whose leaves
/// are {} and whose "." key marks a member with children), as a new trie. Non-object values are treated as {}.
boost::json::object union_field_sets(const boost::json::object& a, const boost::json::object& b);

/// The RFC 6902 patch that hands `live`'s client-side-apply fields to `ssa_manager`, or nullopt when `live` has
/// neither an Update entry of `csa_manager` (main resource, no subresource) nor the last-applied annotation.
/// The rule (client-go csaupgrade): the Apply entry of `ssa_manager` (else the newest Update entry of
/// `csa_manager`, turned into it) receives the union of its fields and those of the `csa_manager` Update entry of
/// the same apiVersion, minus the last-applied annotation; every `csa_manager` Update entry is dropped and so is
/// the annotation. The patch starts with a test of metadata.resourceVersion, so a write in between makes the
/// server refuse it (422) instead of losing that write's ownership.
std::optional<boost::json::array> csa_upgrade_patch(const boost::json::object& live, std::string_view ssa_manager,
                                                    std::string_view csa_manager = kClientSideApplyManager);

}  // namespace mindie::kube
