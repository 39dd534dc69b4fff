#include "table.h"

#include <algorithm>
#include <cctype>
#include <ctime>

namespace mindie::sandbox {

using nlohmann::json;

namespace {

long long seconds_since(const std::string& rfc3339, bool& ok) {
  std::tm tm{};
  ok = strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr;
  return ok ? static_cast<long long>(std::time(nullptr) - timegm(&tm)) : 0;
}

const json& obj_at(const json& o, const char* key) {
  static const json empty = json::object();
  return o.is_object() && o.contains(key) && o[key].is_object() ? o[key] : empty;
}

const json& arr_at(const json& o, const char* key) {
  static const json empty = json::array();
  return o.is_object() && o.contains(key) && o[key].is_array() ? o[key] : empty;
}

std::string str_at(const json& o, const char* key, const std::string& fallback = "") {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : fallback;
}

long long int_at(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_number_integer() ? o[key].get<long long>() : 0;
}

json column(const char* name, const char* type, int priority = 0) {
  return {{"name", name}, {"type", type}, {"format", std::string(name) == "Name" ? "name" : ""}, {"description", ""},
          {"priority", priority}};
}

// The event printer's columns: Last Seen, Type, Reason, Object, Message first (kubectl get events).
json event_table(const std::vector<json>& events, const json& list_meta, bool with_columns) {
  const json columns = {column("Last Seen", "string"), column("Type", "string"),     column("Reason", "string"),
                        column("Object", "string"),    column("Subobject", "string", 1), column("Source", "string", 1),
                        column("Message", "string"),   column("First Seen", "string", 1),
                        column("Count", "string", 1),  column("Name", "string", 1)};
  json rows = json::array();
  for (const auto& e : events) {
    const json& meta = obj_at(e, "metadata");
    const json& involved = obj_at(e, "involvedObject");
    std::string last = str_at(e, "lastTimestamp");
    if (last.empty()) last = str_at(obj_at(e, "series"), "lastObservedTime");
    if (last.empty()) last = str_at(e, "eventTime");
    std::string first = str_at(e, "firstTimestamp");
    if (first.empty()) first = str_at(e, "eventTime");
    std::string kind = str_at(involved, "kind");
    for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const json& source = obj_at(e, "source");
    std::string from = str_at(source, "component");
    if (from.empty()) from = str_at(e, "reportingComponent");
    if (!str_at(source, "host").empty()) from += ", " + str_at(source, "host");
    long long count = int_at(e, "count");
    if (count == 0) count = int_at(obj_at(e, "series"), "count");
    json partial = meta;
    partial.erase("managedFields");
    rows.push_back({{"cells", {human_age(last), str_at(e, "type"), str_at(e, "reason"),
                               kind + "/" + str_at(involved, "name"), str_at(involved, "fieldPath"), from,
                               str_at(e, "message"), human_age(first), std::to_string(std::max(1LL, count)),
                               str_at(meta, "name")}},
                    {"object", {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"},
                                {"metadata", partial}}}});
  }
  return {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", list_meta},
          {"columnDefinitions", with_columns ? columns : json(nullptr)}, {"rows", rows}};
}

}  // namespace

std::string human_age(const std::string& rfc3339) {
  bool ok = false;
  const long long secs = seconds_since(rfc3339, ok);
  if (!ok) return "<unknown>";
  if (secs < 0) return "<invalid>";
  const long long m = secs / 60, h = secs / 3600, d = h / 24;
  if (secs < 120) return std::to_string(secs) + "s";
  if (m < 10) return std::to_string(m) + "m" + (secs % 60 ? std::to_string(secs % 60) + "s" : "");
  if (m < 180) return std::to_string(m) + "m";
  if (h < 8) return std::to_string(h) + "h" + (m % 60 ? std::to_string(m % 60) + "m" : "");
  if (h < 48) return std::to_string(h) + "h";
  if (h < 192) return std::to_string(d) + "d" + (h % 24 ? std::to_string(h % 24) + "h" : "");
  return std::to_string(d) + "d";
}

std::string pod_display_status(const json& pod) {
  const json& status = obj_at(pod, "status");
  std::string reason = str_at(status, "phase", "Pending");
  if (!str_at(status, "reason").empty()) reason = str_at(status, "reason");
  const json& statuses = arr_at(status, "containerStatuses");
  for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
    const json& state = obj_at(*it, "state");
    if (!str_at(obj_at(state, "waiting"), "reason").empty()) reason = str_at(obj_at(state, "waiting"), "reason");
    else if (!str_at(obj_at(state, "terminated"), "reason").empty())
      reason = str_at(obj_at(state, "terminated"), "reason");
  }
  const json& meta = obj_at(pod, "metadata");
  const std::string phase = str_at(status, "phase");
  if (meta.contains("deletionTimestamp") && str_at(status, "reason") == "NodeLost") return "Unknown";
  if (meta.contains("deletionTimestamp") && phase != "Succeeded" && phase != "Failed") return "Terminating";
  return reason;
}

json to_table(const std::string& kind, const std::vector<json>& objects, const json& list_meta, bool with_columns) {
  const auto col = [](const char* name, const char* type, int priority = 0) {
    return json{{"name", name}, {"type", type}, {"format", std::string(name) == "Name" ? "name" : ""},
                {"description", ""}, {"priority", priority}};
  };
  if (kind == "Event") return event_table(objects, list_meta, with_columns);
  json columns = {col("Name", "string")};
  if (kind == "Pod")
    for (auto c : {col("Ready", "string"), col("Status", "string"), col("Restarts", "string")}) columns.push_back(c);
  if (kind == "Deployment")
    for (auto c : {col("Ready", "string"), col("Up-to-date", "string"), col("Available", "string")})
      columns.push_back(c);
  if (kind == "StatefulSet") columns.push_back(col("Ready", "string"));
  if (kind == "ReplicaSet")
    for (auto c : {col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer")})
      columns.push_back(c);
  if (kind == "Namespace") columns.push_back(col("Status", "string"));
  if (kind == "ConfigMap") columns.push_back(col("Data", "integer"));
  columns.push_back(col("Age", "string"));
  if (kind == "Pod")
    for (auto c : {col("IP", "string", 1), col("Node", "string", 1)}) columns.push_back(c);
  json rows = json::array();
  for (const auto& o : objects) {
    const json& meta = obj_at(o, "metadata");
    const json& status = obj_at(o, "status");
    const json& spec = obj_at(o, "spec");
    json cells = {str_at(meta, "name")};
    if (kind == "Pod") {
      long long ready = 0, restarts = 0, last_ago = -1;
      std::string last_restart;  // the latest lastState.terminated.finishedAt
      for (const auto& c : arr_at(status, "containerStatuses")) {
        if (c.value("ready", false) && obj_at(c, "state").contains("running")) ++ready;
        restarts += int_at(c, "restartCount");
        const std::string finished = str_at(obj_at(obj_at(c, "lastState"), "terminated"), "finishedAt");
        bool ok = false;
        const long long ago = seconds_since(finished, ok);
        if (ok && (last_ago < 0 || ago < last_ago)) last_ago = ago, last_restart = finished;
      }
      cells.push_back(std::to_string(ready) + "/" + std::to_string(arr_at(spec, "containers").size()));
      cells.push_back(pod_display_status(o));
      std::string r = std::to_string(restarts);
      if (restarts > 0 && !last_restart.empty()) r += " (" + human_age(last_restart) + " ago)";
      cells.push_back(r);
    }
    if (kind == "Deployment") {
      cells.push_back(std::to_string(int_at(status, "readyReplicas")) + "/" + std::to_string(int_at(spec, "replicas")));
      cells.push_back(int_at(status, "updatedReplicas"));
      cells.push_back(int_at(status, "availableReplicas"));
    }
    if (kind == "StatefulSet")
      cells.push_back(std::to_string(int_at(status, "readyReplicas")) + "/" + std::to_string(int_at(spec, "replicas")));
    if (kind == "ReplicaSet") {
      cells.push_back(int_at(spec, "replicas"));
      cells.push_back(int_at(status, "replicas"));
      cells.push_back(int_at(status, "readyReplicas"));
    }
    if (kind == "Namespace") cells.push_back(str_at(status, "phase", "Active"));
    if (kind == "ConfigMap") cells.push_back(obj_at(o, "data").size() + obj_at(o, "binaryData").size());
    cells.push_back(human_age(str_at(meta, "creationTimestamp")));
    if (kind == "Pod") {
      cells.push_back(str_at(status, "podIP", "<none>"));
      cells.push_back(str_at(spec, "nodeName", "<none>"));
    }
    json partial = meta;
    partial.erase("managedFields");
    rows.push_back({{"cells", cells},
                    {"object", {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"},
                                {"metadata", partial}}}});
  }
  return {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", list_meta},
          {"columnDefinitions", with_columns ? columns : json(nullptr)}, {"rows", rows}};
}

}  // namespace mindie::sandbox
