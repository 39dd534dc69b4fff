// Whether a workload's pods run its current pod template: a Deployment's or StatefulSet's rollout as kubectl rollout
// status judges it, and which live Deployments a rendering would roll. Pure: objects in, findings out.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mindie::rollout {

/// Why the pods of workload `w` of `kind` ("Deployment" or "StatefulSet") do not all run its current pod template
/// yet; "" when they do. kubectl rollout status's rules
/// (k8s.io/kubectl pkg/polymorphichelpers/rollout_status.go, DeploymentStatusViewer and StatefulSetStatusViewer):
/// the controller has observed the generation; a Deployment has status.updatedReplicas >= spec.replicas and no
/// pods of old ReplicaSets (status.replicas <= updatedReplicas), a StatefulSet currentRevision == updateRevision.
/// Availability is left to the pods' readiness, which status judges itself. Another kind: "".
std::string pending(const boost::json::value& w, std::string_view kind);

/// Deployments of `rendered` (objects about to be applied) whose live counterpart in `live` (Deployment list items)
/// carries another pod template hash (render::kTemplateHashAnnotation): the deployment controller will roll them.
/// Role (label app.kubernetes.io/component) -> "deployment/NAME", in `live`'s order. Deployments not live yet are new,
/// not rolled.
std::map<std::string, std::vector<std::string>> rolled_by(const std::vector<boost::json::object>& rendered,
                                                          const boost::json::array& live);

}  // namespace mindie::rollout
