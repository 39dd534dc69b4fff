#include "pod_state.h"

#include <cstdio>

namespace mindie::sandbox {

using nlohmann::json;

namespace {

const json& obj_at(const json& o, const char* key) {
  static const json empty = json::object();
  return o.is_object() && o.contains(key) && o[key].is_object() ? o[key] : empty;
}

std::string str_at(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

constexpr const char* kNames[] = {"Ready",           "NotReady",         "ContainerCreating", "Unschedulable",
                                  "ImagePullBackOff", "CrashLoopBackOff", "OOMKilled",         "Terminating"};

std::string hex64(const std::string& seed) {
  std::string out;
  std::uint32_t h = fnv32a(seed);
  char buf[9];
  for (int i = 0; i < 8; ++i) {
    h = fnv32a(seed + std::to_string(i) + std::to_string(h));
    std::snprintf(buf, sizeof buf, "%08x", h);
    out += buf;
  }
  return out;
}

// time.Duration.String for whole seconds: 10s, 1m20s, 5m0s.
std::string go_duration(int seconds) {
  if (seconds < 60) return std::to_string(seconds) + "s";
  return std::to_string(seconds / 60) + "m" + std::to_string(seconds % 60) + "s";
}

// The first extended resource the pod asks for (huawei.com/Ascend910, ...), else cpu.
std::string scarce_resource(const json& pod) {
  for (const auto& c : obj_at(pod, "spec").value("containers", json::array())) {
    for (const char* kind : {"limits", "requests"}) {
      for (const auto& [k, v] : obj_at(obj_at(c, "resources"), kind).items())
        if (k.rfind("huawei.com/", 0) == 0) return k;
    }
  }
  return "cpu";
}

// metav1.Condition-style pod conditions: lastTransitionTime moves only when the status flips.
struct Cond {
  std::string type, status, reason, message;
};

json conditions(const json& previous_status, const std::vector<Cond>& wanted, const std::string& now) {
  json out = json::array();
  for (const auto& w : wanted) {
    std::string since = now;
    for (const auto& c : previous_status.value("conditions", json::array()))
      if (c.is_object() && c.value("type", "") == w.type && c.value("status", "") == w.status)
        since = c.value("lastTransitionTime", now);
    json c = {{"type", w.type}, {"status", w.status}, {"lastProbeTime", nullptr}, {"lastTransitionTime", since}};
    if (!w.reason.empty()) c["reason"] = w.reason;
    if (!w.message.empty()) c["message"] = w.message;
    out.push_back(c);
  }
  return out;
}

std::string readiness_failure(const json& container, const std::string& pod_ip) {
  const json& probe = obj_at(container, "readinessProbe");
  const auto port_of = [&](const json& action) {
    const json& p = action.value("port", json(80));
    if (p.is_number_integer()) return std::to_string(p.get<int>());
    for (const auto& cp : container.value("ports", json::array()))
      if (cp.is_object() && cp.value("name", json("")) == p) return std::to_string(cp.value("containerPort", 0));
    return p.is_string() ? p.get<std::string>() : std::string("80");
  };
  if (probe.contains("httpGet")) {
    const json& g = probe["httpGet"];
    const std::string addr = pod_ip + ":" + port_of(g);
    return "Readiness probe failed: Get \"" + std::string(g.value("scheme", "HTTP") == "HTTPS" ? "https" : "http") +
           "://" + addr + g.value("path", "/") + "\": dial tcp " + addr + ": connect: connection refused";
  }
  if (probe.contains("tcpSocket"))
    return "Readiness probe failed: dial tcp " + pod_ip + ":" + port_of(probe["tcpSocket"]) +
           ": connect: connection refused";
  if (probe.contains("grpc"))
    return "Readiness probe failed: timeout: failed to connect service \"" + pod_ip + ":" + port_of(probe["grpc"]) +
           "\" within 1s";
  // An exec probe's message is the command's output; a failing script that prints nothing leaves it empty.
  if (probe.contains("exec")) return "Readiness probe failed: ";
  return "Readiness probe failed: HTTP probe failed with statuscode: 503";
}

}  // namespace

std::uint32_t fnv32a(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

std::string node_for(const std::string& pod_name) {
  return "sandbox-node-" + std::to_string(fnv32a(pod_name) % kSandboxNodes);
}

std::string host_ip_for(const std::string& pod_name) {
  return "192.168.0." + std::to_string(fnv32a(pod_name) % kSandboxNodes + 10);
}

std::string pod_ip_for(const std::string& pod_name) {
  const std::uint32_t h = fnv32a(pod_name);
  return "10.244." + std::to_string((h >> 8) % 250 + 1) + "." + std::to_string(h % 250 + 2);
}

std::optional<PodState> parse_pod_state(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
    if (name == kNames[i]) return static_cast<PodState>(i);
  return std::nullopt;
}

std::string to_string(PodState state) { return kNames[static_cast<int>(state)]; }

std::string pod_state_names() {
  std::string out;
  for (const char* n : kNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

PodTransition apply_pod_state(const json& original, PodState state, const std::string& now) {
  PodTransition t{original, {}};
  json& pod = t.pod;
  if (!pod["spec"].is_object()) pod["spec"] = json::object();
  json& spec = pod["spec"];
  json& meta = pod["metadata"];
  const json previous = obj_at(original, "status");
  const std::string ns = str_at(meta, "namespace"), name = str_at(meta, "name"), uid = str_at(meta, "uid");
  const std::string scheduler = str_at(spec, "schedulerName") == "volcano" ? "volcano" : "default-scheduler";
  const auto emit = [&](const char* type, const char* reason, const std::string& message,
                        const std::string& component, const std::string& container = "") {
    t.events.push_back({type, reason, message, component, container.empty() ? "" : "spec.containers{" + container + "}"});
  };
  const std::string qos = previous.value("qosClass", "BestEffort");

  if (state == PodState::Unschedulable) {
    // Never bound: no node, no addresses, no container statuses.
    spec.erase("nodeName");
    const std::string nodes = std::to_string(kSandboxNodes);
    const std::string resource = scarce_resource(pod);
    const std::string message =
        scheduler == "volcano"
            ? "0/" + nodes + " nodes are unavailable: " + nodes + " Insufficient " + resource + "."
            : "0/" + nodes + " nodes are available: " + nodes + " Insufficient " + resource + ". preemption: 0/" +
                  nodes + " nodes are available: " + nodes + " No preemption victims found for incoming pod.";
    pod["status"] = {{"phase", "Pending"},
                     {"qosClass", qos},
                     {"conditions", conditions(previous, {{"PodScheduled", "False", "Unschedulable", message}}, now)}};
    emit("Warning", "FailedScheduling", message, scheduler);
    return t;
  }

  if (state == PodState::Terminating) {
    // The taint manager evicts pods of an unreachable node; their kubelet never confirms, so they stay.
    if (!meta.contains("deletionTimestamp")) {
      meta["deletionTimestamp"] = now;
      meta["deletionGracePeriodSeconds"] = spec.value("terminationGracePeriodSeconds", json(30));
    }
    json status = previous;
    std::vector<Cond> wanted;
    bool disruption = false;
    for (const auto& c : previous.value("conditions", json::array())) {
      if (!c.is_object()) continue;
      Cond w{c.value("type", ""), c.value("status", ""), c.value("reason", ""), c.value("message", "")};
      if (w.type == "Ready") w = {"Ready", "False", "", ""};
      if (w.type == "DisruptionTarget") disruption = true;
      wanted.push_back(w);
    }
    if (!disruption)
      wanted.push_back({"DisruptionTarget", "True", "DeletionByTaintManager",
                        "Taint manager: deleting due to NoExecute taint"});
    status["conditions"] = conditions(previous, wanted, now);
    pod["status"] = status;
    emit("Normal", "TaintManagerEviction", "Marking for deletion Pod " + ns + "/" + name, "taint-eviction-controller");
    return t;
  }

  // Every other state runs on a node.
  if (str_at(spec, "nodeName").empty()) {
    spec["nodeName"] = node_for(name);
    emit("Normal", "Scheduled", "Successfully assigned " + ns + "/" + name + " to " + node_for(name), scheduler);
  }
  const std::string pod_ip = pod_ip_for(name), host_ip = host_ip_for(name);
  const bool has_ip = state != PodState::ContainerCreating;
  const bool running = state == PodState::Ready || state == PodState::NotReady ||
                       state == PodState::CrashLoopBackOff || state == PodState::OOMKilled;
  json statuses = json::array();
  std::vector<std::string> unready;
  for (const auto& c : spec.value("containers", json::array())) {
    if (!c.is_object()) continue;
    const std::string cname = c.value("name", json("")).is_string() ? c.value("name", "") : "";
    const std::string image = c.value("image", json("")).is_string() ? c.value("image", "") : "";
    json before = json::object();
    for (const auto& s : previous.value("containerStatuses", json::array()))
      if (s.is_object() && s.value("name", json("")) == cname) before = s;
    const bool was_running = obj_at(before, "state").contains("running");
    int restarts = before.value("restartCount", json(0)).is_number_integer() ? before.value("restartCount", 0) : 0;
    json last_state = obj_at(before, "lastState");
    std::string container_id = str_at(before, "containerID");
    const std::string started_at = was_running ? str_at(obj_at(obj_at(before, "state"), "running"), "startedAt") : now;
    json s = {{"name", cname}, {"image", image}, {"imageID", ""}, {"ready", false}, {"started", false}};
    const auto new_container = [&] { container_id = "containerd://" + hex64(ns + "/" + name + "/" + cname + "/" +
                                                                           std::to_string(restarts) + "/" + now); };
    switch (state) {
      case PodState::Ready:
      case PodState::NotReady:
        if (!was_running) {
          new_container();
          emit("Normal", "Pulled", "Container image \"" + image + "\" already present on machine", "kubelet", cname);
          emit("Normal", "Created", "Created container " + cname, "kubelet", cname);
          emit("Normal", "Started", "Started container " + cname, "kubelet", cname);
        }
        s["state"] = {{"running", {{"startedAt", started_at}}}};
        s["ready"] = state == PodState::Ready;
        s["started"] = true;
        if (state == PodState::NotReady) emit("Warning", "Unhealthy", readiness_failure(c, pod_ip), "kubelet", cname);
        break;
      case PodState::ContainerCreating:
        s["state"] = {{"waiting", {{"reason", "ContainerCreating"}}}};
        container_id.clear();
        emit("Normal", "Pulling", "Pulling image \"" + image + "\"", "kubelet", cname);
        break;
      case PodState::ImagePullBackOff: {
        s["state"] = {{"waiting", {{"reason", "ImagePullBackOff"},
                                   {"message", "Back-off pulling image \"" + image + "\""}}}};
        container_id.clear();
        const std::string failure = "failed to pull and unpack image \"" + image + "\": failed to resolve reference \"" +
                                    image + "\": " + image + ": not found";
        emit("Normal", "Pulling", "Pulling image \"" + image + "\"", "kubelet", cname);
        emit("Warning", "Failed", "Failed to pull image \"" + image + "\": rpc error: code = NotFound desc = " + failure,
             "kubelet", cname);
        emit("Warning", "Failed", "Error: ErrImagePull", "kubelet", cname);
        emit("Normal", "BackOff", "Back-off pulling image \"" + image + "\"", "kubelet", cname);
        emit("Warning", "Failed", "Error: ImagePullBackOff", "kubelet", cname);
        break;
      }
      case PodState::CrashLoopBackOff:
      case PodState::OOMKilled: {
        const bool oom = state == PodState::OOMKilled;
        if (container_id.empty()) new_container();
        last_state = {{"terminated", {{"exitCode", oom ? 137 : 1},
                                      {"reason", oom ? "OOMKilled" : "Error"},
                                      {"startedAt", started_at},
                                      {"finishedAt", now},
                                      {"containerID", container_id}}}};
        ++restarts;  // containerID stays the terminated container's until the next one starts
        // kubelet's back-off: 10 s doubling per restart, at most 5 minutes.
        const int backoff = restarts >= 6 ? 300 : 10 << (restarts - 1);
        const std::string who = name + "_" + ns + "(" + uid + ")";
        s["state"] = {{"waiting", {{"reason", "CrashLoopBackOff"},
                                   {"message", "back-off " + go_duration(backoff) +
                                                   " restarting failed container=" + cname + " pod=" + who}}}};
        emit("Warning", "BackOff", "Back-off restarting failed container " + cname + " in pod " + who, "kubelet", cname);
        break;
      }
      default:
        break;
    }
    if (!container_id.empty()) {
      s["containerID"] = container_id;
      s["imageID"] = image + "@sha256:" + hex64(image);
    }
    s["restartCount"] = restarts;
    s["lastState"] = last_state;
    if (!s["ready"].get<bool>()) unready.push_back(cname);
    statuses.push_back(std::move(s));
  }
  std::string unready_list;
  for (const auto& n : unready) unready_list += (unready_list.empty() ? "" : " ") + n;
  const bool ready = unready.empty();
  const Cond ready_cond = ready ? Cond{"Ready", "True", "", ""}
                                : Cond{"Ready", "False", "ContainersNotReady",
                                       "containers with unready status: [" + unready_list + "]"};
  Cond containers_ready = ready_cond;
  containers_ready.type = "ContainersReady";
  json status = {{"phase", running ? "Running" : "Pending"},
                 {"hostIP", host_ip},
                 {"hostIPs", {{{"ip", host_ip}}}},
                 {"startTime", previous.value("startTime", now)},
                 {"qosClass", qos},
                 {"containerStatuses", statuses},
                 {"conditions", conditions(previous,
                                           {{"PodReadyToStartContainers", has_ip ? "True" : "False", "", ""},
                                            {"Initialized", "True", "", ""},
                                            ready_cond,
                                            containers_ready,
                                            {"PodScheduled", "True", "", ""}},
                                           now)}};
  if (has_ip) {
    status["podIP"] = pod_ip;
    status["podIPs"] = {{{"ip", pod_ip}}};
  }
  pod["status"] = status;
  return t;
}

json make_pod_event(const json& pod, const PodEventSpec& e, const std::string& now, const std::string& now_micro,
                    std::uint64_t unique) {
  const json& meta = obj_at(pod, "metadata");
  const std::string ns = str_at(meta, "namespace"), name = str_at(meta, "name");
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(unique));
  // Events about other objects (the operator's about an InstanceSet) name that object's kind.
  json involved = {{"apiVersion", pod.value("apiVersion", "v1")},
                   {"kind", pod.value("kind", "Pod")},
                   {"name", name},
                   {"namespace", ns},
                   {"uid", str_at(meta, "uid")},
                   {"resourceVersion", str_at(meta, "resourceVersion")}};
  if (!e.field_path.empty()) involved["fieldPath"] = e.field_path;
  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name + "." + suffix}, {"namespace", ns}}},
                {"involvedObject", involved},
                {"reason", e.reason},
                {"message", e.message},
                {"type", e.type}};
  if (e.component == "default-scheduler") {
    // events.k8s.io/v1 as the core/v1 API shows it.
    involved.erase("fieldPath");
    event["involvedObject"] = involved;
    event["source"] = json::object();
    event["firstTimestamp"] = nullptr;
    event["lastTimestamp"] = nullptr;
    event["eventTime"] = now_micro;
    event["action"] = e.reason == "Scheduled" ? "Binding" : "Scheduling";
    event["reportingComponent"] = "default-scheduler";
    event["reportingInstance"] = "default-scheduler-sandbox-control-plane";
    return event;
  }
  const std::string host = e.component == "kubelet" ? str_at(obj_at(pod, "spec"), "nodeName") : "";
  event["source"] = {{"component", e.component}};
  if (!host.empty()) event["source"]["host"] = host;
  event["firstTimestamp"] = now;
  event["lastTimestamp"] = now;
  event["count"] = 1;
  event["eventTime"] = nullptr;
  event["reportingComponent"] = e.component;
  event["reportingInstance"] = host;
  return event;
}

json repeat_pod_event(json existing, const std::string& now, const std::string& now_micro) {
  if (existing.contains("eventTime") && existing["eventTime"].is_string()) {
    const int count = obj_at(existing, "series").value("count", 1);
    existing["series"] = {{"count", count + 1}, {"lastObservedTime", now_micro}};
    return existing;
  }
  existing["count"] = existing.value("count", json(1)).is_number_integer() ? existing.value("count", 1) + 1 : 2;
  existing["lastTimestamp"] = now;
  return existing;
}

}  // namespace mindie::sandbox
