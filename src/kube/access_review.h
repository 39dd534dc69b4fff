// Whether the user may act on resources, asked of the server: one SelfSubjectRulesReview per namespace (what
// `kubectl auth can-i --list` sends), then a SelfSubjectAccessReview (`kubectl auth can-i VERB RESOURCE`) only for
// what the rules cannot settle.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "kube/client.h"

namespace mindie::kube {

/// One right: `verb` on `resource` of API group `group` (core: ""), in namespace `ns`; an empty `ns` asks
/// cluster-wide (a cluster-scoped resource, or every namespace).
struct ResourceAccess {
  std::string verb;
  std::string group;
  std::string resource;
  std::string ns;
  bool operator==(const ResourceAccess&) const = default;
};

/// Whether `resource_rules` (a SelfSubjectRulesReview's status.resourceRules) grant `a` as RBAC matches a request
/// of no object name (kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows): "*" matches every
/// verb, group and resource; a rule limited to resourceNames grants nothing here.
bool rules_grant(const boost::json::array& resource_rules, const ResourceAccess& a);

/// Which of `asked` the server denies, in their order. The rules review of a namespace settles what it lists there
/// and, when it is complete, what it does not; a cluster-wide right it lists may come from a RoleBinding of that
/// namespace only, so those are asked with a SelfSubjectAccessReview, after one of "*" on "*" cluster-wide (a
/// cluster administrator's single answer for all). A review the server refuses (403, 404) settles nothing: that
/// right is not reported. Throws ApiError / TransportError for other failures.
std::vector<ResourceAccess> denied(Client& client, const std::vector<ResourceAccess>& asked);

}  // namespace mindie::kube
