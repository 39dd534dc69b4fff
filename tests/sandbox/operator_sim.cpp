#include "operator_sim.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

namespace mindie::sandbox {

using nlohmann::json;

namespace {

// The operator's own limits (validation failures only reach its log and nothing is reconciled).
constexpr int kMaxServices = 64;
constexpr int kMaxRoles = 32;
// Beyond these the simulation refuses the set (a test instrument must not allocate without bound).
constexpr long long kMaxInstances = 4096;
constexpr int kMaxPodsPerInstance = 256;

int int_or(const json& obj, const char* key, int fallback) {
  if (!obj.is_object() || !obj.contains(key)) return fallback;
  const json& v = obj[key];
  return v.is_number_integer() ? v.get<int>() : -1;
}

const json& roles_of(const json& iss) {
  static const json none = json::array();
  const json* cur = &iss;
  for (const char* k : {"spec", "template", "roles"}) {
    if (!cur->is_object() || !cur->contains(k)) return none;
    cur = &(*cur)[k];
  }
  return cur->is_array() ? *cur : none;
}

const json* role_named(const json& iss, const std::string& name) {
  for (const auto& r : roles_of(iss))
    if (r.is_object() && r.value("name", json()).is_string() && r["name"] == name) return &r;
  return nullptr;
}

std::uint32_t fnv32a(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
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

bool pod_ready(const json& pod) {
  const json conditions = pod.value("status", json::object()).value("conditions", json::array());
  for (const auto& c : conditions)
    if (c.is_object() && c.value("type", "") == "Ready") return c.value("status", "") == "True";
  return false;
}

bool master_standby(const std::string& role, int pods_per_instance) {
  return pods_per_instance == 2 &&
         (role.find("controller") != std::string::npos || role.find("coordinator") != std::string::npos);
}

}  // namespace

std::vector<InstanceRef> desired_instances(const json& iss) {
  std::vector<InstanceRef> out;
  const int services = int_or(iss.value("spec", json::object()), "replicas", 1);
  const json& roles = roles_of(iss);
  if (services < 0 || services > kMaxServices || roles.size() > kMaxRoles) return out;
  std::set<std::string> names;
  for (const auto& r : roles) {
    if (!r.is_object() || !r.value("name", json()).is_string()) return {};
    const std::string name = r["name"];
    if (name.empty() || !names.insert(name).second) return {};
  }
  long long total = 0;
  for (const auto& r : roles) total += std::max(0, int_or(r, "replicas", 1));
  if (total * services > kMaxInstances) return {};
  for (int i = 0; i < services; ++i)
    for (const auto& r : roles)
      for (int k = 0; k < int_or(r, "replicas", 1); ++k) out.push_back({i, r["name"], k});
  return out;
}

bool instance_of_pod(const json& pod, const std::string& iss_name, InstanceRef& out) {
  const json labels = pod.value("metadata", json::object()).value("labels", json::object());
  const auto str = [&](const char* k) {
    return labels.is_object() && labels.contains(k) && labels[k].is_string() ? labels[k].get<std::string>() : "";
  };
  const std::string service = str(kLabelInferService), role = str(kLabelInstanceSet), index = str(kLabelInstanceIndex);
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

std::vector<json> pods_for_instance(const json& iss, const InstanceRef& inst, const std::string& now) {
  const json* role = role_named(iss, inst.role);
  if (!role) return {};
  const json meta = iss.value("metadata", json::object());
  const std::string set_name = meta.value("name", "");
  const std::string service_name = set_name + "-" + std::to_string(inst.service);
  const std::string workload = service_name + "-" + inst.role + "-" + std::to_string(inst.index);
  const json role_spec = role->value("spec", json::object()).is_object() ? role->value("spec", json::object())
                                                                           : json::object();
  const int pods = std::clamp(int_or(role_spec, "replicas", 1), 0, kMaxPodsPerInstance);
  const json tmpl = role_spec.value("template", json::object()).is_object() ? role_spec.value("template", json::object())
                                                                            : json::object();
  const json tmeta = tmpl.value("metadata", json::object()).is_object() ? tmpl.value("metadata", json::object())
                                                                        : json::object();
  json spec = tmpl.value("spec", json::object()).is_object() ? tmpl.value("spec", json::object()) : json::object();
  const json workload_ref = role->value("workload", json::object());
  const bool stateful = workload_ref.is_object() && workload_ref.value("kind", json()) == "StatefulSet";

  json labels = tmeta.value("labels", json::object()).is_object() ? tmeta.value("labels", json::object())
                                                                  : json::object();
  labels[kLabelInferService] = service_name;
  labels[kLabelInstanceSet] = inst.role;
  labels[kLabelInstanceIndex] = std::to_string(inst.index);
  labels[kLabelOperator] = "true";

  const json env_add = json::array({{{"name", "INFER_SERVICE_NAME"}, {"value", set_name}},
                                    {{"name", "INFER_SERVICE_INDEX"}, {"value", std::to_string(inst.service)}},
                                    {{"name", "INSTANCE_ROLE"}, {"value", inst.role}},
                                    {{"name", "INSTANCE_INDEX"}, {"value", std::to_string(inst.index)}}});
  json container_statuses = json::array();
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (auto& c : spec[list]) {
      if (!c.is_object()) continue;
      if (!c.contains("env") || !c["env"].is_array()) c["env"] = json::array();
      for (const auto& e : env_add) c["env"].push_back(e);
    }
  }
  const std::string template_hash = safe_encode(fnv32a(tmpl.dump()), 10);

  std::vector<json> out;
  for (int j = 0; j < pods; ++j) {
    const std::string name = stateful ? workload + "-" + std::to_string(j)
                                      : workload + "-" + template_hash + "-" +
                                            safe_encode(fnv32a(workload + "/" + std::to_string(j)), 5);
    json pod_labels = labels;
    if (stateful) {
      pod_labels["statefulset.kubernetes.io/pod-name"] = name;
      pod_labels["apps.kubernetes.io/pod-index"] = std::to_string(j);
    } else {
      pod_labels["pod-template-hash"] = template_hash;
    }
    const bool ready = !(j == 1 && master_standby(inst.role, pods));
    const std::string ready_str = ready ? "True" : "False";
    const std::uint32_t h = fnv32a(name);
    json statuses = json::array();
    for (const auto& c : spec.value("containers", json::array()))
      if (c.is_object())
        statuses.push_back({{"name", c.value("name", json("")).is_string() ? c.value("name", "") : ""},
                            {"image", c.value("image", json("")).is_string() ? c.value("image", "") : ""},
                            {"imageID", ""},
                            {"containerID", "containerd://" + safe_encode(h, 16)},
                            {"ready", ready},
                            {"started", true},
                            {"restartCount", 0},
                            {"state", {{"running", {{"startedAt", now}}}}}});
    json pod_meta = {{"name", name},
                     {"namespace", meta.value("namespace", "default")},
                     {"labels", pod_labels},
                     {"ownerReferences",
                      {{{"apiVersion", iss.value("apiVersion", "mindcluster.huawei.com/v1")},
                        {"kind", "InferServiceSet"},
                        {"name", set_name},
                        {"uid", meta.value("uid", "")},
                        {"controller", true},
                        {"blockOwnerDeletion", true}}}}};
    if (!stateful) pod_meta["generateName"] = workload + "-" + template_hash + "-";
    if (tmeta.contains("annotations") && tmeta["annotations"].is_object()) pod_meta["annotations"] = tmeta["annotations"];
    json pod_spec = spec;
    pod_spec["nodeName"] = "sandbox-node-" + std::to_string(h % 4);
    if (stateful) {
      pod_spec["hostname"] = name;
      pod_spec["subdomain"] = "service-" + workload;
    }
    const std::string ip = "10.244." + std::to_string((h >> 8) % 250 + 1) + "." + std::to_string(h % 250 + 2);
    json status = {{"phase", "Running"},
                   {"hostIP", "192.168.0." + std::to_string(h % 4 + 10)},
                   {"podIP", ip},
                   {"podIPs", {{{"ip", ip}}}},
                   {"startTime", now},
                   {"qosClass", "BestEffort"},
                   {"conditions",
                    {{{"type", "Initialized"}, {"status", "True"}, {"lastTransitionTime", now}},
                     {{"type", "Ready"}, {"status", ready_str}, {"lastTransitionTime", now}},
                     {{"type", "ContainersReady"}, {"status", ready_str}, {"lastTransitionTime", now}},
                     {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", now}}}},
                   {"containerStatuses", statuses}};
    out.push_back({{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", pod_meta}, {"spec", pod_spec}, {"status", status}});
  }
  return out;
}

json infer_service_set_status(const json& iss, const std::vector<json>& pods, const json& previous,
                              const std::string& now) {
  const std::string name = iss.value("metadata", json::object()).value("name", "");
  // instance → (pods, ready pods)
  std::map<std::tuple<int, std::string, int>, std::pair<int, int>> counts;
  for (const auto& p : pods) {
    InstanceRef ref;
    if (!instance_of_pod(p, name, ref)) continue;
    auto& c = counts[{ref.service, ref.role, ref.index}];
    ++c.first;
    if (pod_ready(p)) ++c.second;
  }
  const std::vector<InstanceRef> wanted = desired_instances(iss);
  const int services = std::max(0, int_or(iss.value("spec", json::object()), "replicas", 1));
  int ready_services = 0;
  for (int i = 0; i < services; ++i) {
    bool ready = true;
    for (const auto& w : wanted) {
      if (w.service != i) continue;
      auto it = counts.find({w.service, w.role, w.index});
      if (it == counts.end() || it->second.first == 0 || it->second.second != it->second.first) ready = false;
    }
    if (ready) ++ready_services;
  }
  const std::int64_t generation = iss.value("metadata", json::object()).value("generation", 1);
  const bool all_ready = ready_services == services;
  const std::string cond_status = all_ready ? "True" : "False";
  std::string transition = now;
  for (const auto& c : previous.value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == cond_status)
      transition = c.value("lastTransitionTime", now);
  json status = previous.is_object() ? previous : json::object();
  status["replicas"] = services;
  status["readyReplicas"] = ready_services;
  status["observedGeneration"] = generation;
  status["conditions"] = {{{"type", "Ready"},
                           {"status", cond_status},
                           {"reason", all_ready ? "InferServicesReady" : "InferServicesNotReady"},
                           {"message", std::to_string(ready_services) + "/" + std::to_string(services) +
                                           " InferServices ready"},
                           {"observedGeneration", generation},
                           {"lastTransitionTime", transition}}};
  return status;
}

}  // namespace mindie::sandbox
