// Operator overrides of the built-in pod templates (deploy --overrides FILE): per role, resources, extra labels,
// annotations, tolerations, nodeSelector entries, volumes and mounts, MindCluster fault rescheduling and gang
// scheduling. Parsed and validated completely here (every problem, with its path); what needs the rendered
// templates (collisions with fields the tool owns) is checked by render::render_infer_service_set. Knows nothing of
// HTTP.
//
// File format (YAML; every field optional; README "Overrides" has the reference):
//   roles:
//     prefill:                               # controller, coordinator, prefill, decode, kv-pool, kv-conductor
//       resources: {requests: {cpu: "32", memory: 128Gi}, limits: {memory: 512Gi}}
//       labels: {team: llm}                  # added to the pod template
//       annotations: {example.com/owner: alice}
//       nodeSelector: {example.com/pool: llm}
//       tolerations: [{key: dedicated, operator: Equal, value: llm, effect: NoSchedule}]
//       volumes: [{name: cache, hostPath: {path: /data/cache, type: DirectoryOrCreate}}]
//       volumeMounts: [{name: cache, mountPath: /root/.cache}]
//       faultScheduling: force               # grace | force | off (Volcano-scheduled roles)
//       faultRetryTimes: 3                   # 0..100
//       gangSchedule: true                   # infer.huawei.com/gang-schedule on the role
#pragma once

#include <boost/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mindcluster/labels.h"
#include "validation/problem.h"

namespace mindie::overrides {

/// MindCluster fault rescheduling of a Volcano-scheduled pod (label "fault-scheduling").
using mindcluster::FaultScheduling;
using mindcluster::to_string;

/// The changes to one role, validated and normalised (quantities and label values as strings, list entries as
/// Kubernetes objects with only the fields this file accepts).
struct RoleOverrides {
  boost::json::object requests;       ///< resource name -> quantity (string)
  boost::json::object limits;         ///< resource name -> quantity (string)
  boost::json::object labels;         ///< extra pod template labels
  boost::json::object annotations;    ///< extra pod template annotations
  boost::json::object node_selector;  ///< extra nodeSelector entries
  boost::json::array tolerations;     ///< appended to the pod's tolerations
  boost::json::array volumes;         ///< appended to the pod's volumes
  boost::json::array volume_mounts;   ///< appended to the role container's volumeMounts
  std::optional<FaultScheduling> fault_scheduling;
  std::optional<int> fault_retry_times;  ///< 0..100
  std::optional<bool> gang_schedule;
};

/// A parsed overrides file. `raw` is the file byte for byte: deploy stores it in the motor-config ConfigMap
/// (baseline::kOverridesKey), so a redeploy without --overrides reuses it.
struct Overrides {
  std::string raw;
  std::string source;                          ///< names the file in messages
  std::map<std::string, RoleOverrides> roles;  ///< by role name
};

/// Parses and validates an overrides file. `source` names it in messages (the path given to --overrides, or
/// "configmap/motor-config overrides.yaml" for a stored one). An empty file (or one holding only comments or
/// `roles: {}`) means no overrides. Throws validation::ValidationError listing every problem, each at a path such as
/// "roles.prefill.resources.limits.memory" or "roles.decode.tolerations[0].effect": YAML syntax, unknown roles
/// (the message lists the known ones) or fields, wrong types, invalid label keys/values, quantities, resource
/// names, tolerations, volumes and mounts, out-of-range numbers. Limits follow Kubernetes' validation
/// (apimachinery label/annotation rules, core/v1 Toleration, Volume, VolumeMount) so a file that passes renders
/// objects the API server accepts.
Overrides parse_overrides(std::string raw, std::string_view source);

/// What apply_overrides checks a role's overrides against, beyond its rendered objects (messages name the paths).
struct RoleFacts {
  std::string role;
  int pods = 1;              ///< pods per instance
  std::string pods_path;     ///< the config path of `pods`
  std::string npu_resource;  ///< the hardware profile's NPU resource name
  std::string npu_path;      ///< the config path of the role's NPUs per pod ("" when it has none)
};

/// Applies one role's overrides `o` to its rendered InferServiceSet role `rendered` and workload spec `spec` (both
/// from render's role templates), adding to `problems` (at "roles.<role>...." paths) every collision with what the
/// templates and the profile set: owned labels, annotations, nodeSelector keys, tolerations, volume names and mount
/// paths, the NPU resource, a request above its limit, Volcano features on a role Volcano does not schedule.
void apply_overrides(const RoleOverrides& o, const RoleFacts& facts, boost::json::object& rendered,
                     boost::json::object& spec, std::vector<validation::Problem>& problems);

}  // namespace mindie::overrides
