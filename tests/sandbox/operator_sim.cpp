#include "operator_sim.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "pod_state.h"

namespace mindie::sandbox {

using nlohmann::json;

namespace {

// The operator's own limits (validation failures only reach its log and nothing is reconciled).
constexpr int kMaxServices = 64;
constexpr std::size_t kMaxRoles = 32;
// Beyond these the simulation refuses the set (a test instrument must not allocate without bound).
constexpr long long kMaxInstances = 4096;
constexpr int kMaxPodsPerInstance = 256;

int int_or(const json& obj, const char* key, int fallback) {
  if (!obj.is_object() || !obj.contains(key)) return fallback;
  const json& v = obj[key];
  return v.is_number_integer() ? static_cast<int>(std::clamp<std::int64_t>(v.get<std::int64_t>(), -1, 1 << 20)) : -1;
}

const json& obj_at(const json& o, const char* key) {
  static const json empty = json::object();
  return o.is_object() && o.contains(key) && o[key].is_object() ? o[key] : empty;
}

std::string str_at(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

const json& roles_of(const json& iss) {
  static const json none = json::array();
  const json& roles = obj_at(obj_at(iss, "spec"), "template");
  return roles.contains("roles") && roles["roles"].is_array() ? roles["roles"] : none;
}

// rand.SafeEncodeString: the alphabet Kubernetes uses for generated name suffixes (no vowels, no confusables).
std::string safe_encode(std::uint64_t v, std::size_t len) {
  static const std::string alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (std::size_t i = 0; i < len; ++i) {
    out.push_back(alphabet[v % alphabet.size()]);
    v = v / alphabet.size() + 0x9E3779B97F4A7C15ull * (i + 1);
  }
  return out;
}

std::string template_hash(const json& workload) {
  return safe_encode(fnv32a(obj_at(workload, "spec").value("template", json::object()).dump()), 10);
}

json merged_labels(std::initializer_list<const json*> sources) {
  json out = json::object();
  for (const json* s : sources)
    if (s->is_object())
      for (const auto& [k, v] : s->items()) out[k] = v;
  return out;
}

std::int64_t generation_of(const json& o) {
  const json& g = obj_at(o, "metadata").value("generation", json(1));
  return g.is_number_integer() ? g.get<std::int64_t>() : 1;
}

std::int64_t status_int(const json& o, const char* key) {
  const json& s = obj_at(o, "status");
  return s.contains(key) && s[key].is_number_integer() ? s[key].get<std::int64_t>() : 0;
}

// A metav1.Condition whose lastTransitionTime only moves when its status flips.
json condition(const json& previous, const std::string& type, bool value, const std::string& reason,
               const std::string& message, std::int64_t generation, const std::string& now) {
  const std::string status = value ? "True" : "False";
  std::string since = now;
  for (const auto& c : previous.value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == type && c.value("status", "") == status)
      since = c.value("lastTransitionTime", now);
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"observedGeneration", generation},
          {"lastTransitionTime", since}};
}

// The Deployment flavour (appsv1.DeploymentCondition): lastUpdateTime and lastTransitionTime.
json deployment_condition(const json& previous, const std::string& type, bool value, const std::string& reason,
                          const std::string& message, const std::string& now) {
  const std::string status = value ? "True" : "False";
  std::string since = now, updated = now;
  for (const auto& c : previous.value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == type && c.value("status", "") == status) {
      since = c.value("lastTransitionTime", now);
      if (c.value("reason", "") == reason) updated = c.value("lastUpdateTime", now);
    }
  return {{"type", type}, {"status", status}, {"lastUpdateTime", updated}, {"lastTransitionTime", since},
          {"reason", reason}, {"message", message}};
}

std::int64_t count_ready(const std::vector<ObjectPtr>& pods) {
  return std::count_if(pods.begin(), pods.end(), [](const ObjectPtr& p) { return pod_ready(*p); });
}

}  // namespace

bool infer_service_set_valid(const json& iss) {
  const json& spec = obj_at(iss, "spec");
  const int services = int_or(spec, "replicas", 1);
  const json& roles = roles_of(iss);
  if (services < 1 || services > kMaxServices || roles.size() > kMaxRoles) return false;
  std::set<std::string> names;
  long long total = 0;
  for (const auto& r : roles) {
    const std::string name = str_at(r, "name");
    if (name.empty() || !names.insert(name).second) return false;
    total += std::max(0, int_or(r, "replicas", 1));
  }
  return total * services <= kMaxInstances;
}

std::vector<InstanceRef> desired_instances(const json& iss) {
  std::vector<InstanceRef> out;
  if (!infer_service_set_valid(iss)) return out;
  const int services = int_or(obj_at(iss, "spec"), "replicas", 1);
  for (int i = 0; i < services; ++i)
    for (const auto& r : roles_of(iss))
      for (int k = 0; k < int_or(r, "replicas", 1); ++k) out.push_back({i, r["name"], k});
  return out;
}

bool instance_of_pod(const json& pod, const std::string& iss_name, InstanceRef& out) {
  const json& labels = obj_at(obj_at(pod, "metadata"), "labels");
  const std::string service = str_at(labels, kLabelInferService), role = str_at(labels, kLabelInstanceSet),
                    index = str_at(labels, kLabelInstanceIndex);
  const std::string prefix = iss_name + "-";
  if (role.empty() || service.rfind(prefix, 0) != 0) return false;
  try {
    std::size_t used = 0;
    out.service = std::stoi(service.substr(prefix.size()), &used);
    if (used != service.size() - prefix.size()) return false;
    out.index = std::stoi(index, &used);
    if (used != index.size()) return false;
  } catch (const std::exception&) {
    return false;
  }
  out.role = role;
  return true;
}

json controller_ref(const json& owner) {
  const json& meta = obj_at(owner, "metadata");
  return {{"apiVersion", owner.value("apiVersion", "")},
          {"kind", owner.value("kind", "")},
          {"name", str_at(meta, "name")},
          {"uid", str_at(meta, "uid")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

json infer_service_for(const json& iss, int index) {
  const json& meta = obj_at(iss, "metadata");
  const std::string set_name = str_at(meta, "name");
  return {{"apiVersion", "mindcluster.huawei.com/v1"},
          {"kind", "InferService"},
          {"metadata",
           {{"name", set_name + "-" + std::to_string(index)},
            {"namespace", str_at(meta, "namespace")},
            {"labels", {{kLabelInferServiceSet, set_name}, {kLabelInferServiceIndex, std::to_string(index)}}},
            {"ownerReferences", {controller_ref(iss)}}}},
          {"spec", obj_at(obj_at(iss, "spec"), "template")}};
}

json instance_set_for(const json& is, const json& role) {
  const json& meta = obj_at(is, "metadata");
  const std::string is_name = str_at(meta, "name"), role_name = str_at(role, "name");
  const json own = {{kLabelInferService, is_name}, {kLabelInstanceSet, role_name}, {kLabelPriorityStrategy, "Parallel"}};
  json md = {{"name", is_name + "-" + role_name},
             {"namespace", str_at(meta, "namespace")},
             {"labels", merged_labels({&obj_at(obj_at(role, "metadata"), "labels"), &own})},
             {"ownerReferences", {controller_ref(is)}}};
  const json& role_ann = obj_at(obj_at(role, "metadata"), "annotations");
  if (role_ann.is_object() && !role_ann.empty()) md["annotations"] = role_ann;
  const std::string policy = str_at(obj_at(obj_at(obj_at(obj_at(role, "spec"), "template"), "metadata"), "annotations"),
                                    "huawei.com/schedule_policy");
  if (!policy.empty() && !obj_at(role_ann, "huawei.com/schedule_policy").is_string())
    md["annotations"]["huawei.com/schedule_policy"] = policy;
  return {{"apiVersion", "mindcluster.huawei.com/v1"}, {"kind", "InstanceSet"}, {"metadata", md}, {"spec", role}};
}

std::string instance_set_refusal(const json& ist, bool pod_groups_served) {
  const json& spec = obj_at(ist, "spec");
  if (!spec.contains("replicas") || spec["replicas"].is_null()) return "instanceSet replicas is nil";
  const json services = spec.value("services", json::array());
  if (services.is_array())
    for (const auto& entry : services) {
      const json& s = obj_at(entry, "spec");
      if (str_at(s, "type") != "NodePort") continue;
      const json ports = s.value("ports", json::array());
      if (!ports.is_array()) continue;
      for (const auto& p : ports)
        if (!p.is_object() || !p.value("nodePort", json(0)).is_number_integer() || p.value("nodePort", 0) == 0)
          return "service " + str_at(entry, "name") + " of type NodePort must specify a non-zero nodePort";
    }
  if (str_at(obj_at(obj_at(ist, "metadata"), "labels"), kLabelGangSchedule) == "true" && !pod_groups_served)
    return "gang schedule is enabled but the PodGroup CRD (podgroups.scheduling.volcano.sh) is not supported";
  return "";
}

int infer_service_index(const json& ist, const std::string& set_name) {
  const std::string is_name = str_at(obj_at(obj_at(ist, "metadata"), "labels"), kLabelInferService);
  if (is_name.size() <= set_name.size() + 1) return 0;
  const std::string digits = is_name.substr(set_name.size() + 1);
  if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoi(digits);
}

json pod_group_for(const json& ist, int index) {
  const json& meta = obj_at(ist, "metadata");
  const int pods = std::clamp(int_or(obj_at(obj_at(ist, "spec"), "spec"), "replicas", 1), 0, kMaxPodsPerInstance);
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata",
           {{"name", "pg-" + str_at(meta, "name") + "-" + std::to_string(index)},
            {"namespace", str_at(meta, "namespace")},
            {"labels", {{kLabelOperator, "true"}}},
            {"ownerReferences", {controller_ref(ist)}}}},
          {"spec", {{"minMember", pods}}}};
}

bool hpa_scaled(const json& role) { return str_at(obj_at(role, "scalingPolicy"), "type") == "HPA"; }

json workload_for(const json& ist, int index, const std::string& set_name) {
  const json& meta = obj_at(ist, "metadata");
  const json& role = obj_at(ist, "spec");
  const std::string role_name = str_at(role, "name");
  const std::string is_name = str_at(obj_at(meta, "labels"), kLabelInferService);
  const std::string service_index = is_name.size() > set_name.size() + 1 ? is_name.substr(set_name.size() + 1) : "0";
  const std::string name = str_at(meta, "name") + "-" + std::to_string(index);
  const json& role_spec = obj_at(role, "spec");
  const int pods = std::clamp(int_or(role_spec, "replicas", 1), 0, kMaxPodsPerInstance);
  const json& tmpl = obj_at(role_spec, "template");
  const json& tmeta = obj_at(tmpl, "metadata");
  json pod_spec = obj_at(tmpl, "spec");
  const bool stateful = str_at(obj_at(role, "workload"), "kind") == "StatefulSet";

  const json own = {{kLabelInferService, is_name},
                    {kLabelInstanceSet, role_name},
                    {kLabelInstanceIndex, std::to_string(index)},
                    {kLabelOperator, "true"}};
  const json pod_labels = merged_labels({&obj_at(tmeta, "labels"), &own});
  const json env_add = json::array({{{"name", "INFER_SERVICE_NAME"}, {"value", set_name}},
                                    {{"name", "INFER_SERVICE_INDEX"}, {"value", service_index}},
                                    {{"name", "INSTANCE_ROLE"}, {"value", role_name}},
                                    {{"name", "INSTANCE_INDEX"}, {"value", std::to_string(index)}}});
  for (const char* list : {"initContainers", "containers"}) {
    if (!pod_spec.contains(list) || !pod_spec[list].is_array()) continue;
    for (auto& c : pod_spec[list]) {
      if (!c.is_object()) continue;
      if (!c.contains("env") || !c["env"].is_array()) c["env"] = json::array();
      for (const auto& e : env_add) c["env"].push_back(e);
    }
  }
  json template_meta = {{"labels", pod_labels}};
  if (tmeta.contains("annotations")) template_meta["annotations"] = tmeta["annotations"];
  json workload_meta = {{"name", name},
                        {"namespace", str_at(meta, "namespace")},
                        {"labels", merged_labels({&obj_at(obj_at(role, "metadata"), "labels"), &pod_labels})},
                        {"ownerReferences", {controller_ref(ist)}}};
  if (obj_at(role, "metadata").contains("annotations"))
    workload_meta["annotations"] = obj_at(role, "metadata")["annotations"];
  json spec = {{"replicas", pods},
               {"selector", {{"matchLabels", {{kLabelInferService, is_name},
                                              {kLabelInstanceSet, role_name},
                                              {kLabelInstanceIndex, std::to_string(index)}}}}},
               {"template", {{"metadata", template_meta}, {"spec", pod_spec}}},
               {"revisionHistoryLimit", 10}};
  // The defaults kube-apiserver fills in for each kind.
  if (stateful) {
    spec["serviceName"] = "service-" + name;
    spec["podManagementPolicy"] = "OrderedReady";
    spec["updateStrategy"] = {{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 0}}}};
  } else {
    spec["strategy"] = {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxUnavailable", "25%"}, {"maxSurge", "25%"}}}};
    spec["progressDeadlineSeconds"] = 600;
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", stateful ? "StatefulSet" : "Deployment"},
          {"metadata", workload_meta},
          {"spec", spec}};
}

json replica_set_for(const json& deployment) {
  const json& meta = obj_at(deployment, "metadata");
  const json& spec = obj_at(deployment, "spec");
  const std::string hash = template_hash(deployment);
  json tmpl = spec.value("template", json::object());
  tmpl["metadata"]["labels"]["pod-template-hash"] = hash;
  json selector = spec.value("selector", json::object());
  selector["matchLabels"]["pod-template-hash"] = hash;
  json labels = tmpl["metadata"]["labels"];
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata",
           {{"name", str_at(meta, "name") + "-" + hash},
            {"namespace", str_at(meta, "namespace")},
            {"labels", labels},
            {"annotations",
             {{"deployment.kubernetes.io/desired-replicas", std::to_string(spec.value("replicas", 1))},
              {"deployment.kubernetes.io/max-replicas",
               std::to_string(spec.value("replicas", 1) + (spec.value("replicas", 1) + 3) / 4)},
              {"deployment.kubernetes.io/revision", "1"}}},
            {"ownerReferences", {controller_ref(deployment)}}}},
          {"spec", {{"replicas", spec.value("replicas", 1)}, {"selector", selector}, {"template", tmpl}}}};
}

json headless_service_for(const json& statefulset, const json& owner) {
  const json& meta = obj_at(statefulset, "metadata");
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", obj_at(statefulset, "spec").value("serviceName", "service-" + str_at(meta, "name"))},
            {"namespace", str_at(meta, "namespace")},
            {"labels", obj_at(meta, "labels")},
            {"ownerReferences", {controller_ref(owner)}}}},
          {"spec",
           {{"clusterIP", "None"},
            {"clusterIPs", {"None"}},
            {"type", "ClusterIP"},
            {"ports", {{{"name", "infer"}, {"port", 8080}, {"protocol", "TCP"}, {"targetPort", 8080}}}},
            {"selector", obj_at(obj_at(statefulset, "spec"), "selector").value("matchLabels", json::object())},
            {"sessionAffinity", "None"}}}};
}

json role_service_for(const json& ist, const json& entry, int service_index) {
  const json& meta = obj_at(ist, "metadata");
  const json& labels = obj_at(meta, "labels");
  json spec = obj_at(entry, "spec");
  if (spec.contains("ports") && spec["ports"].is_array())
    for (auto& p : spec["ports"])
      if (p.is_object() && p.value("nodePort", json(0)).is_number_integer() && p.value("nodePort", 0) != 0)
        p["nodePort"] = p["nodePort"].get<int>() + service_index;
  if (!spec.contains("selector"))
    spec["selector"] = {{kLabelInferService, str_at(labels, kLabelInferService)},
                        {kLabelInstanceSet, str_at(labels, kLabelInstanceSet)}};
  if (!spec.contains("type")) spec["type"] = "ClusterIP";
  json service_meta = {{"name", str_at(entry, "name") + "-" + str_at(meta, "name")},
                       {"namespace", str_at(meta, "namespace")},
                       {"labels", merged_labels({&labels, &obj_at(obj_at(entry, "metadata"), "labels")})},
                       {"ownerReferences", {controller_ref(ist)}}};
  if (obj_at(entry, "metadata").contains("annotations"))
    service_meta["annotations"] = obj_at(entry, "metadata")["annotations"];
  return {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", service_meta}, {"spec", spec}};
}

std::string replica_set_pod_name(const std::string& rs_name, int seed) {
  return rs_name + "-" + safe_encode(fnv32a(rs_name + "/" + std::to_string(seed)), 5);
}

json pod_for(const json& pod_owner, const std::string& name, bool ready, const std::string& now) {
  const json& owner_meta = obj_at(pod_owner, "metadata");
  const json& owner_spec = obj_at(pod_owner, "spec");
  const json& tmpl = obj_at(owner_spec, "template");
  const bool stateful = pod_owner.value("kind", "") == "StatefulSet";
  json labels = obj_at(obj_at(tmpl, "metadata"), "labels");
  json meta = {{"name", name}, {"namespace", str_at(owner_meta, "namespace")}};
  json spec = obj_at(tmpl, "spec");
  if (stateful) {
    const std::string owner_name = str_at(owner_meta, "name");
    labels["statefulset.kubernetes.io/pod-name"] = name;
    labels["apps.kubernetes.io/pod-index"] = name.substr(owner_name.size() + 1);
    labels["controller-revision-hash"] = owner_name + "-" + template_hash(pod_owner);
    spec["hostname"] = name;
    spec["subdomain"] = owner_spec.value("serviceName", "");
  } else {
    meta["generateName"] = str_at(owner_meta, "name") + "-";
  }
  meta["labels"] = labels;
  if (obj_at(tmpl, "metadata").contains("annotations")) meta["annotations"] = obj_at(tmpl, "metadata")["annotations"];
  meta["ownerReferences"] = {controller_ref(pod_owner)};
  spec["nodeName"] = node_for(name);
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}};
  // Started as kubelet reports a fresh pod; its events are not recorded (thousands of pods start at once).
  return apply_pod_state(pod, ready ? PodState::Ready : PodState::NotReady, now).pod;
}

bool pod_ready(const json& pod) { return condition_true(pod, "Ready"); }

bool condition_true(const json& object, const std::string& type) {
  for (const auto& c : obj_at(object, "status").value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == type) return c.value("status", "") == "True";
  return false;
}

bool master_standby(const std::string& role, int pods_per_instance) {
  return pods_per_instance == 2 &&
         (role.find("controller") != std::string::npos || role.find("coordinator") != std::string::npos);
}

json deployment_status(const json& deployment, const std::vector<ObjectPtr>& pods, const std::string& rs_name,
                       const json& previous, const std::string& now) {
  const std::int64_t desired = obj_at(deployment, "spec").value("replicas", json(1)).get<std::int64_t>();
  const std::int64_t total = static_cast<std::int64_t>(pods.size());
  const std::int64_t ready = count_ready(pods);
  const std::int64_t max_unavailable = desired / 4;  // the default 25%, rounded down
  json s = json::object();
  // DeploymentStatus fields are omitempty: zeros are left out.
  s["observedGeneration"] = generation_of(deployment);
  if (total) s["replicas"] = total, s["updatedReplicas"] = total;
  if (ready) s["readyReplicas"] = ready, s["availableReplicas"] = ready;
  if (desired - ready > 0) s["unavailableReplicas"] = desired - ready;
  const bool available = ready >= desired - max_unavailable;
  const bool complete = total == desired && ready == desired;
  s["conditions"] = {
      deployment_condition(previous, "Available", available,
                           available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
                           available ? "Deployment has minimum availability."
                                     : "Deployment does not have minimum availability.",
                           now),
      deployment_condition(
          previous, "Progressing", true, complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
          "ReplicaSet \"" + rs_name + (complete ? "\" has successfully progressed." : "\" is progressing."), now)};
  return s;
}

json replica_set_status(const json& rs, const std::vector<ObjectPtr>& pods) {
  const std::int64_t total = static_cast<std::int64_t>(pods.size());
  const std::int64_t ready = count_ready(pods);
  json s = {{"replicas", total}, {"observedGeneration", generation_of(rs)}};
  if (total) s["fullyLabeledReplicas"] = total;
  if (ready) s["readyReplicas"] = ready, s["availableReplicas"] = ready;
  return s;
}

json stateful_set_status(const json& sts, const std::vector<ObjectPtr>& pods) {
  const std::int64_t total = static_cast<std::int64_t>(pods.size());
  const std::int64_t ready = count_ready(pods);
  const std::string revision = str_at(obj_at(sts, "metadata"), "name") + "-" + template_hash(sts);
  json s = {{"observedGeneration", generation_of(sts)},
            {"replicas", total},
            {"availableReplicas", ready},
            {"currentRevision", revision},
            {"updateRevision", revision},
            {"collisionCount", 0}};
  if (ready) s["readyReplicas"] = ready;
  if (total) s["currentReplicas"] = total, s["updatedReplicas"] = total;
  return s;
}

bool workload_ready(const json& workload) {
  const std::int64_t desired = obj_at(workload, "spec").value("replicas", json(1)).get<std::int64_t>();
  return status_int(workload, "observedGeneration") == generation_of(workload) &&
         status_int(workload, "readyReplicas") == desired && status_int(workload, "updatedReplicas") == desired;
}

json instance_set_status(const json& ist, const std::vector<json>& workloads, const json& previous,
                         const std::string& now) {
  const json& labels = obj_at(obj_at(ist, "metadata"), "labels");
  const int desired = std::max(0, int_or(obj_at(ist, "spec"), "replicas", 1));
  const int ready = static_cast<int>(std::count_if(workloads.begin(), workloads.end(), workload_ready));
  const std::int64_t generation = generation_of(ist);
  const bool all = ready >= desired && static_cast<int>(workloads.size()) == desired;
  json s = {{"replicas", workloads.size()},
            {"readyReplicas", ready},
            {"labelSelector", std::string(kLabelInferService) + "=" + str_at(labels, kLabelInferService) + "," +
                                  kLabelInstanceSet + "=" + str_at(labels, kLabelInstanceSet)},
            {"observedGeneration", generation},
            {"conditions", {condition(previous, "Ready", all, all ? "InstancesReady" : "InstancesNotReady",
                                      std::to_string(ready) + "/" + std::to_string(desired) + " instances ready",
                                      generation, now)}}};
  if (hpa_scaled(obj_at(ist, "spec")))
    s["scalingResourceStatus"] = {{"type", "HPA"},
                                  {"name", str_at(obj_at(ist, "metadata"), "name")},
                                  {"ready", true},
                                  {"message", "the HPA was able to successfully calculate a replica count"}};
  return s;
}

json infer_service_status(const json& is, const std::vector<json>& instance_sets, const json& previous,
                          const std::string& now) {
  const json& roles = obj_at(is, "spec").value("roles", json::array());
  const int wanted = roles.is_array() ? static_cast<int>(roles.size()) : 0;
  const int ready = static_cast<int>(std::count_if(instance_sets.begin(), instance_sets.end(),
                                                   [](const json& s) { return condition_true(s, "Ready"); }));
  const std::int64_t generation = generation_of(is);
  const bool all = ready >= wanted;
  return {{"replicas", wanted},
          {"readyReplicas", ready},
          {"observedGeneration", generation},
          {"conditions", {condition(previous, "Ready", all, all ? "InstanceSetsReady" : "InstanceSetsNotReady",
                                    std::to_string(ready) + "/" + std::to_string(wanted) + " InstanceSets ready",
                                    generation, now)}}};
}

json infer_service_set_status(const json& iss, const std::vector<json>& infer_services, const json& previous,
                              const std::string& now) {
  const int services = std::max(0, int_or(obj_at(iss, "spec"), "replicas", 1));
  const int ready = static_cast<int>(std::count_if(infer_services.begin(), infer_services.end(),
                                                   [](const json& s) { return condition_true(s, "Ready"); }));
  const std::int64_t generation = generation_of(iss);
  const bool all = ready >= services;
  json status = previous.is_object() ? previous : json::object();
  status["replicas"] = services;
  status["readyReplicas"] = ready;
  status["observedGeneration"] = generation;
  status["conditions"] = {condition(previous, "Ready", all, all ? "InferServicesReady" : "InferServicesNotReady",
                                    std::to_string(ready) + "/" + std::to_string(services) + " InferServices ready",
                                    generation, now)};
  return status;
}

}  // namespace mindie::sandbox
