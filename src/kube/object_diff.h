// How `kubectl mindie diff` shows an API object: without the fields the server owns, named as kubectl diff names its
// files (k8s.io/kubectl pkg/cmd/diff/diff.go, InfoObject.Name).
#pragma once

#include <boost/json.hpp>
#include <string>

namespace mindie::kube {

/// `obj` without what the server writes rather than the user: metadata.managedFields, resourceVersion, uid,
/// generation, creationTimestamp, selfLink, and status. A live object and a dry-run apply of the same fields then
/// read alike; a change the apply makes still shows.
boost::json::object without_server_fields(boost::json::object obj);

/// kubectl diff's file name of `obj`: "<group>.<version>.<Kind>.<namespace>.<name>" ("v1.ConfigMap.ns.name" for the
/// core group; an empty namespace for a cluster-scoped object).
std::string diff_file_name(const boost::json::object& obj);

}  // namespace mindie::kube
