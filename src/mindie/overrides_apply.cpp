// Applying an overrides file to the rendered role templates (render_role.cpp): each field added, or a problem for
// each collision with what kubectl-mindie sets. The file itself is parsed in overrides.cpp.
#include <map>
#include <set>

#include "kube/names.h"
#include "mindcluster/labels.h"
#include "mindie/overrides.h"
#include "mindie/render.h"
#include "mindie/render_parts.h"
#include "util/json_path.h"
#include "util/strings.h"

namespace mindie::overrides {

namespace json = boost::json;
using render::detail::list;
using render::detail::sub;
using validation::Problem;

namespace {

/// Collects the problems of one role's overrides, at paths below "roles.<role>".
struct Problems {
  std::string base;  ///< "roles.<role>"
  std::vector<Problem>& out;
  void add(std::string path, std::string message) const { out.push_back({std::move(path), std::move(message)}); }
};

// Labels that Kubernetes controllers and infer-operator put on pods: an override of them would be overwritten
// or would break selection (infer-operator behaviour doc; apps/v1 controllers).
bool reserved_label(const std::string& key, std::string& who) {
  if (key.starts_with("infer.huawei.com/")) {
    who = "MindCluster infer-operator sets infer.huawei.com/ labels on every pod";
    return true;
  }
  for (const char* k : {"pod-template-hash", "controller-revision-hash", "statefulset.kubernetes.io/pod-name",
                        "apps.kubernetes.io/pod-index"}) {
    if (key == k) {
      who = "the Deployment/StatefulSet controller sets it";
      return true;
    }
  }
  return false;
}

/// Labels: the template's (selector, fault handling, profile) are owned.
void apply_labels(const RoleOverrides& o, json::object& labels, const Problems& p) {
  for (const auto& kv : o.labels) {
    const std::string key(kv.key());
    std::string who;
    if (const json::value* mine = labels.if_contains(key)) {
      std::string hint = key == "app" ? "it selects the role's pods for the workload and its Services"
                         : key == mindcluster::kFaultSchedulingLabel ? "set faultScheduling instead"
                         : key == mindcluster::kFaultRetryTimesLabel ? "set faultRetryTimes instead"
                                                                     : "it comes from the hardware profile";
      p.add(util::child_path(p.base + ".labels", key), "collides with the pod label " + key + "=" +
                                                           std::string(mine->as_string()) +
                                                           " that kubectl-mindie sets (" + hint + ")");
    } else if (reserved_label(key, who)) {
      p.add(util::child_path(p.base + ".labels", key), "collides with a label that is not ours to set: " + who);
    } else {
      labels[key] = kv.value();
    }
  }
}

/// Annotations and nodeSelector entries: those of the hardware profile are owned.
void apply_annotations_and_selector(const RoleOverrides& o, json::object& pod_md, json::object& pod,
                                    const Problems& p) {
  for (const auto& kv : o.annotations) {
    json::object& annotations = pod_md["annotations"].get_object();
    const std::string key(kv.key());
    if (const json::value* mine = annotations.if_contains(key))
      p.add(util::child_path(p.base + ".annotations", key),
            "collides with the pod annotation " + key + "=" + std::string(mine->as_string()) +
                " that kubectl-mindie sets from the hardware profile (motor_deploy_config.hardware_type)");
    else annotations[key] = kv.value();
  }
  if (!o.node_selector.empty()) {
    json::object& selector = pod["nodeSelector"].get_object();
    for (const auto& kv : o.node_selector) {
      if (const json::value* mine = selector.if_contains(kv.key()))
        p.add(util::child_path(p.base + ".nodeSelector", kv.key()),
              "collides with the nodeSelector " + std::string(kv.key()) + "=" + std::string(mine->as_string()) +
                  " that kubectl-mindie sets from the hardware profile (motor_deploy_config.hardware_type)");
      else selector[kv.key()] = kv.value();
    }
  }
}

/// Tolerations: a key the template tolerates already is owned.
void apply_tolerations(const RoleOverrides& o, json::object& pod, const Problems& p) {
  if (o.tolerations.empty()) return;
  json::array& tolerations = pod["tolerations"].get_array();
  const std::size_t builtin = tolerations.size();
  for (std::size_t i = 0; i < o.tolerations.size(); ++i) {
    const json::object& t = o.tolerations[i].get_object();
    bool clash = false;
    for (std::size_t k = 0; k < builtin; ++k) {
      const json::object& mine = tolerations[k].get_object();
      if (t.contains("key") && mine.contains("key") && t.at("key") == mine.at("key")) {
        p.add(util::item_path(p.base + ".tolerations", i) + ".key",
              "collides with the toleration of " + std::string(mine.at("key").as_string()) +
                  " that kubectl-mindie sets (" + json::serialize(mine) +
                  "); the shortest matching tolerationSeconds wins, so a second one would not change it");
        clash = true;
      }
    }
    if (!clash) tolerations.push_back(t);
  }
}

/// Volumes: names of the template are owned.
void apply_volumes(const RoleOverrides& o, const std::string& role, json::array& volumes, const Problems& p) {
  std::set<std::string> builtin_volumes;
  for (const auto& v : volumes) builtin_volumes.insert(std::string(v.at("name").as_string()));
  for (std::size_t i = 0; i < o.volumes.size(); ++i) {
    const std::string name(o.volumes[i].at("name").as_string());
    if (builtin_volumes.count(name))
      p.add(util::item_path(p.base + ".volumes", i) + ".name",
            "collides with the built-in volume \"" + name + "\" of the " + role + " template");
    else volumes.push_back(o.volumes[i]);
  }
}

/// Mounts: of a volume the pod has, at a path the template does not mount.
void apply_mounts(const RoleOverrides& o, const std::string& role, const json::array& volumes, json::array& mounts,
                  const Problems& p) {
  std::set<std::string> volume_names;
  for (const auto& v : volumes) volume_names.insert(std::string(v.at("name").as_string()));
  std::map<std::string, std::string> builtin_paths;
  for (const auto& m : mounts)
    builtin_paths[std::string(m.at("mountPath").as_string())] = std::string(m.at("name").as_string());
  for (std::size_t i = 0; i < o.volume_mounts.size(); ++i) {
    const json::object& m = o.volume_mounts[i].get_object();
    const std::string at = util::item_path(p.base + ".volumeMounts", i);
    const std::string name(m.at("name").as_string());
    const std::string path(m.at("mountPath").as_string());
    bool ok = true;
    if (!volume_names.count(name)) {
      p.add(at + ".name",
            "no volume \"" + name + "\" in the " + role + " pod (volumes: " + util::join(volume_names, ", ") + ")");
      ok = false;
    }
    if (auto it = builtin_paths.find(path); it != builtin_paths.end()) {
      p.add(at + ".mountPath", "collides with the built-in mount of volume \"" + it->second + "\" at " + path);
      ok = false;
    }
    if (ok) mounts.push_back(m);
  }
}

/// Resources: NPUs come from the config (requests = limits), everything else may change; Kubernetes rejects a
/// request above its limit, so the merged result is checked (an override of one side only).
void apply_resources(const RoleOverrides& o, const RoleFacts& facts, json::object& res, const Problems& p) {
  for (auto [key, mine] : {std::pair{"requests", &o.requests}, std::pair{"limits", &o.limits}}) {
    for (const auto& kv : *mine) {
      if (kv.key() == facts.npu_resource) {
        p.add(util::child_path(p.base + ".resources." + key, kv.key()),
              "the NPU resource is set from " +
                  (facts.npu_path.empty() ? std::string("the config (0 NPUs for this role)") : facts.npu_path) +
                  " (requests = limits); change it there");
        continue;
      }
      sub(res, key)[kv.key()] = kv.value();
    }
  }
  if (res.contains("requests") && res.contains("limits"))
    for (const auto& kv : res.at("requests").as_object()) {
      const json::value* limit = res.at("limits").as_object().if_contains(kv.key());
      if (!limit || !kv.value().is_string() || !limit->is_string()) continue;
      const auto req = kube::parse_quantity(kv.value().get_string());
      const auto lim = kube::parse_quantity(limit->get_string());
      if (req && lim && *req > *lim && (o.requests.contains(kv.key()) || o.limits.contains(kv.key())))
        p.add(util::child_path(p.base + ".resources." +
                                   std::string(o.requests.contains(kv.key()) ? "requests" : "limits"),
                               kv.key()),
              "the " + std::string(kv.key()) + " request " + std::string(kv.value().get_string()) +
                  " would exceed its limit " + std::string(limit->get_string()) +
                  " (the other side comes from the built-in template)");
    }
}

/// MindCluster fault rescheduling and gang scheduling are Volcano's: only for pods Volcano schedules (`volcano`).
void apply_scheduling(const RoleOverrides& o, const RoleFacts& facts, bool volcano, json::object& labels,
                      json::object& rendered, const Problems& p) {
  const auto volcano_only = [&](const char* field) {
    if (volcano) return true;
    p.add(p.base + "." + field,
          "only roles scheduled by Volcano (schedulerName: volcano; the engine roles prefill, "
          "decode, union and single-container) use MindCluster fault rescheduling and gang "
          "scheduling");
    return false;
  };
  if (o.fault_scheduling && volcano_only("faultScheduling"))
    labels[mindcluster::kFaultSchedulingLabel] = to_string(*o.fault_scheduling);
  if (o.fault_retry_times && volcano_only("faultRetryTimes"))
    labels[mindcluster::kFaultRetryTimesLabel] = std::to_string(*o.fault_retry_times);
  if (o.gang_schedule && volcano_only("gangSchedule")) {
    if (*o.gang_schedule && facts.pods < 2) {
      p.add(p.base + ".gangSchedule", "gang scheduling needs more than one pod per instance (" + facts.pods_path +
                                          " is " + std::to_string(facts.pods) +
                                          "): with one pod, Volcano holds the instance's PodGroup and no pod starts");
    } else {
      sub(sub(rendered, "metadata"), "labels")[render::kGangScheduleLabel] = *o.gang_schedule ? "true" : "false";
    }
  }
}

}  // namespace

void apply_overrides(const RoleOverrides& o, const RoleFacts& facts, json::object& rendered, json::object& spec,
                     std::vector<Problem>& problems) {
  const Problems p{util::child_path("roles", facts.role), problems};
  // Every member written below is created first: inserting a key into a Boost.JSON object may move its other
  // members, so references are taken only once the objects have all their keys. A member is created only when
  // the overrides add to it, and anything they add to an existing template member is either added or (when it
  // collides) a problem, so nothing ends up empty.
  json::object& pod_tpl = spec["template"].get_object();
  sub(pod_tpl, "metadata");
  sub(pod_tpl, "spec");
  json::object& pod_md = pod_tpl["metadata"].get_object();
  json::object& pod = pod_tpl["spec"].get_object();
  sub(pod_md, "labels");
  if (!o.annotations.empty()) sub(pod_md, "annotations");
  if (!o.node_selector.empty()) sub(pod, "nodeSelector");
  if (!o.tolerations.empty()) list(pod, "tolerations");
  list(pod, "volumes");
  json::object& c = pod["containers"].get_array()[0].get_object();
  list(c, "volumeMounts");
  sub(c, "resources");
  const bool volcano = pod.contains("schedulerName") && pod.at("schedulerName") == "volcano";

  json::object& labels = pod_md["labels"].get_object();
  apply_labels(o, labels, p);
  apply_annotations_and_selector(o, pod_md, pod, p);
  apply_tolerations(o, pod, p);
  apply_volumes(o, facts.role, pod["volumes"].get_array(), p);
  apply_mounts(o, facts.role, pod["volumes"].get_array(), c["volumeMounts"].get_array(), p);
  apply_resources(o, facts, c["resources"].get_object(), p);
  apply_scheduling(o, facts, volcano, labels, rendered, p);

  // infer-operator: a StatefulSet with gang scheduling must start its pods in parallel. Last: inserting into
  // `spec` may move pod_tpl, which the references above point into.
  if (o.gang_schedule && *o.gang_schedule && volcano && facts.pods > 1 &&
      rendered.at("workload").at("kind") == "StatefulSet")
    spec["podManagementPolicy"] = "Parallel";
}

}  // namespace mindie::overrides
