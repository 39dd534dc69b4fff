#include "aibrix_sim.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "api_server.h"
#include "pod_state.h"

namespace mindie::sandbox {

using json = nlohmann::json;

namespace {

// The label keys AIBrix's controller puts on pods (github.com/vllm-project/aibrix, pkg/constants), as
// src/aibrix/storm_render.h names them for the client side.
constexpr const char* kStormServiceName = "storm-service-name";
constexpr const char* kStormServiceRevision = "storm-service-revision";
constexpr const char* kRoleName = "role-name";
constexpr const char* kRoleSetName = "roleset-name";
constexpr const char* kRoleTemplateHash = "role-template-hash";
constexpr const char* kReplicaIndex = "stormservice.orchestration.aibrix.ai/role-replica-index";
constexpr const char* kPodGroupIndex = "stormservice.orchestration.aibrix.ai/pod-group-index";
constexpr const char* kManager = "aibrix-controller-manager";
constexpr int kMaxSlots = 4096;

const json& obj(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int int_or(const json& j, const char* key, int fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

const json& roles_of(const json& ss) {
  static const json none = json::array();
  const json& spec = obj(obj(obj(ss, "spec"), "template"), "spec");
  const auto it = spec.find("roles");
  return it != spec.end() && it->is_array() ? *it : none;
}

std::string fnv_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 10);
}

std::string now_rfc3339() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool ready(const json& pod) {
  for (const auto& c : obj(pod, "status").value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == "Ready") return c.value("status", "") == "True";
  return false;
}

}  // namespace

std::vector<StormPodSlot> storm_pod_slots(const json& ss) {
  std::vector<StormPodSlot> out;
  const std::string app = str(obj(ss, "metadata"), "name");
  for (const auto& role : roles_of(ss)) {
    const std::string name = str(role, "name");
    if (name.empty()) continue;
    const int replicas = std::clamp(int_or(role, "replicas", 1), 0, kMaxSlots);
    const int group = std::clamp(int_or(role, "podGroupSize", 1), 1, kMaxSlots);
    for (int r = 0; r < replicas; ++r)
      for (int p = 0; p < group; ++p) {
        if (out.size() >= static_cast<std::size_t>(kMaxSlots)) return out;
        std::string pod_name = app + "-roleset-" + name + "-" + std::to_string(r);
        if (group > 1) pod_name += "-" + std::to_string(p);
        out.push_back({name, r, p, group, std::move(pod_name)});
      }
  }
  return out;
}

std::string storm_role_template_hash(const json& role) { return fnv_hex(obj(role, "template").dump()); }

json storm_pod_for(const json& ss, const json& role, const StormPodSlot& slot, const std::string& now) {
  const json& meta = obj(ss, "metadata");
  const std::string app = str(meta, "name");
  const json& tmpl = obj(role, "template");
  json labels = obj(obj(tmpl, "metadata"), "labels");
  labels[kStormServiceName] = app;
  labels[kStormServiceRevision] = app + "-" + fnv_hex(obj(obj(ss, "spec"), "template").dump());
  labels[kRoleName] = slot.role;
  labels[kRoleSetName] = app + "-roleset";
  labels[kRoleTemplateHash] = storm_role_template_hash(role);
  labels[kReplicaIndex] = std::to_string(slot.replica);
  if (slot.group_size > 1) labels[kPodGroupIndex] = std::to_string(slot.pod);
  json pod_meta = {{"name", slot.name}, {"namespace", str(meta, "namespace")}, {"labels", labels}};
  if (obj(tmpl, "metadata").contains("annotations")) pod_meta["annotations"] = obj(tmpl, "metadata")["annotations"];
  pod_meta["ownerReferences"] = {{{"apiVersion", ss.value("apiVersion", "")},
                                  {"kind", ss.value("kind", "")},
                                  {"name", app},
                                  {"uid", str(meta, "uid")},
                                  {"controller", true},
                                  {"blockOwnerDeletion", true}}};
  json spec = obj(tmpl, "spec");
  spec["nodeName"] = node_for(slot.name);
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", pod_meta}, {"spec", spec}};
  return apply_pod_state(pod, PodState::Ready, now).pod;
}

json storm_service_status(const json& ss, const std::vector<ObjectPtr>& pods, const json& previous,
                          const std::string& now) {
  // Pods by role and replica: a replica is ready when every pod of its group is ready and present.
  std::map<std::string, std::map<std::string, std::pair<int, int>>> by_role;  // role -> replica -> (pods, ready)
  std::map<std::string, std::map<std::string, bool>> updated;                 // role -> replica -> all current
  std::map<std::string, std::string> hashes;
  for (const auto& role : roles_of(ss)) hashes[str(role, "name")] = storm_role_template_hash(role);
  for (const auto& p : pods) {
    if (obj(*p, "metadata").contains("deletionTimestamp")) continue;
    const json& labels = obj(obj(*p, "metadata"), "labels");
    const std::string role = str(labels, kRoleName), replica = str(labels, kReplicaIndex);
    auto& [count, ready_count] = by_role[role][replica];
    ++count;
    if (ready(*p)) ++ready_count;
    auto [it, fresh] = updated[role].emplace(replica, true);
    if (str(labels, kRoleTemplateHash) != hashes[role]) it->second = false;
  }
  json role_statuses = json::array();
  bool all_ready = true;
  for (const auto& role : roles_of(ss)) {
    const std::string name = str(role, "name");
    const int want = std::max(0, int_or(role, "replicas", 1));
    const int group = std::max(1, int_or(role, "podGroupSize", 1));
    int replicas = 0, ready_replicas = 0, updated_replicas = 0, updated_ready = 0;
    for (const auto& [replica, counts] : by_role[name]) {
      ++replicas;
      const bool is_ready = counts.first >= group && counts.second >= group;
      const bool is_updated = updated[name][replica];
      ready_replicas += is_ready;
      updated_replicas += is_updated;
      updated_ready += is_ready && is_updated;
    }
    if (ready_replicas != want || replicas != want || updated_ready != want) all_ready = false;
    role_statuses.push_back({{"name", name},
                             {"replicas", replicas},
                             {"readyReplicas", ready_replicas},
                             {"notReadyReplicas", replicas - ready_replicas},
                             {"updatedReplicas", updated_replicas},
                             {"updatedReadyReplicas", updated_ready}});
  }
  std::string since = now;
  for (const auto& c : previous.value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == (all_ready ? "True" : "False"))
      since = c.value("lastTransitionTime", now);
  const std::int64_t generation = obj(ss, "metadata").value("generation", json(1)).get<std::int64_t>();
  return {{"observedGeneration", generation},
          {"replicas", 1},
          {"readyReplicas", all_ready ? 1 : 0},
          {"notReadyReplicas", all_ready ? 0 : 1},
          {"roleStatuses", role_statuses},
          {"conditions",
           {{{"type", "Ready"},
             {"status", all_ready ? "True" : "False"},
             {"reason", all_ready ? "AllRolesReady" : "RolesNotReady"},
             {"message", all_ready ? "every role replica is ready" : "some role replicas are not ready"},
             {"lastTransitionTime", since}}}}};
}

// The AIBrix controller, on ApiServer's store: declared in api_server.h, kept here with the rest of the simulation.
void ApiServer::reconcile_storm_service(const json& given) {
  const ResourceType* ss_t = registry_.find("orchestration.aibrix.ai", "v1alpha1", "stormservices");
  if (!ss_t) return;
  const ResourceType& pods_t = registry_.by_kind("v1", "Pod");
  const std::string ns = str(obj(given, "metadata"), "namespace"), name = str(obj(given, "metadata"), "name");
  const json* current = store_.find(ss_t->key(), ns, name);
  if (!current || (*current)["metadata"].contains("deletionTimestamp")) return;
  const json ss = *current;
  const std::string now = now_rfc3339();
  std::map<std::string, const json*> roles;
  for (const auto& role : roles_of(ss)) roles[str(role, "name")] = &role;
  const std::vector<StormPodSlot> slots = storm_pod_slots(ss);
  std::set<std::string> wanted;
  for (const auto& s : slots) wanted.insert(s.name);

  // kubelet's Killing event about an earlier pod (by its uid): a real cluster keeps such events after the pod is
  // gone, and they are what tells a recreated pod from one that always ran.
  const auto killed = [&](const std::string& pod_name, const std::string& uid, const json* role) {
    std::string container = "main";
    if (role) {
      const json& cs = obj(obj(*role, "template"), "spec").value("containers", json::array());
      if (!cs.empty() && cs[0].is_object()) container = cs[0].value("name", container);
    }
    const json old = {{"metadata", {{"name", pod_name}, {"namespace", ns}, {"uid", uid}}},
                      {"spec", {{"nodeName", node_for(pod_name)}}}};
    record_pod_events(old, {{"Normal", "Killing", "Stopping container " + container, "kubelet",
                             "spec.containers{" + container + "}"}},
                      now);
  };

  // Scale in and role removal: pods of slots no longer wanted go. A role template change (AIBrix's Recreate role
  // update) replaces the role's pods: they go here and are created again below.
  for (const auto& p : owned(pods_t, ss)) {
    const std::string pod_name = str(obj(*p, "metadata"), "name");
    const json& labels = obj(obj(*p, "metadata"), "labels");
    const auto role = roles.find(str(labels, kRoleName));
    const bool stale = role == roles.end() || str(labels, kRoleTemplateHash) != storm_role_template_hash(*role->second);
    if (wanted.count(pod_name) && !stale) continue;
    remove_cascading(pods_t, ns, pod_name, false, true);
    if (!wanted.count(pod_name)) {
      killed(pod_name, str(obj(*p, "metadata"), "uid"), role == roles.end() ? nullptr : role->second);
      storm_pod_uids_.erase(ns + "/" + pod_name);
    }
  }

  for (const auto& slot : slots) {
    const std::string key = ns + "/" + slot.name;
    const json* role = roles[slot.role];
    const json* existing = store_.find(pods_t.key(), ns, slot.name);
    const auto seen = storm_pod_uids_.find(key);
    if (existing) {
      // A pod of this name that the controller did not make (or a stale record): remember it, nothing else.
      storm_pod_uids_[key] = str(obj(*existing, "metadata"), "uid");
      continue;
    }
    if (seen != storm_pod_uids_.end()) killed(slot.name, seen->second, role);
    json pod = storm_pod_for(ss, *role, slot, now);
    // --pod-state rules: ROLE is the role name, INSTANCE the role replica.
    const PodStateRule* rule = nullptr;
    for (const auto& r : options_.pod_states)
      if ((r.role == "*" || r.role == slot.role) && (!r.instance || *r.instance == slot.replica)) rule = &r;
    std::vector<PodEventSpec> events;
    if (rule && rule->state != PodState::Terminating) {
      PodTransition t = apply_pod_state(pod, rule->state, now);
      pod = std::move(t.pod);
      events = std::move(t.events);
    }
    const json stored = ensure(pods_t, std::move(pod), false, kManager);
    if (stored.is_null()) continue;
    storm_pod_uids_[key] = str(obj(stored, "metadata"), "uid");
    record_pod_events(stored, events, now);
  }

  write_status(*ss_t, ss, storm_service_status(ss, owned(pods_t, ss), ss.value("status", json::object()), now),
               kManager);
}

}  // namespace mindie::sandbox
