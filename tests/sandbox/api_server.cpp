#include "api_server.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <set>
#include <sstream>

#include "apply.h"
#include "base64.h"
#include "label_selector.h"
#include "operator_sim.h"
#include "protobuf.h"
#include "support/openapi_schema.h"

namespace mindie::sandbox {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------------
// helpers

namespace {

constexpr std::size_t kMaxConfigMapBytes = 1024 * 1024;    // core.MaxSecretSize
constexpr std::size_t kMaxAnnotationBytes = 256 * 1024;    // TotalAnnotationSizeLimitB
constexpr std::size_t kMaxFieldManagerLength = 128;

std::string now_rfc3339() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::mt19937_64& rng() {
  static std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

std::string new_uid() {
  std::uniform_int_distribution<int> hex(0, 15);
  std::string s = "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx";
  for (char& c : s) {
    if (c == 'x') c = "0123456789abcdef"[hex(rng())];
    else if (c == 'y') c = "89ab"[hex(rng()) % 4];
  }
  return s;
}

std::string random_suffix() {
  static const std::string alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string s;
  for (int i = 0; i < 5; ++i) s.push_back(alphabet[pick(rng())]);
  return s;
}

std::string param(const HttpRequest& req, const std::string& key) {
  auto it = req.params.find(key);
  return it == req.params.end() ? "" : it->second;
}

std::string media_type(const std::string& content_type) {
  std::string m = content_type.substr(0, content_type.find(';'));
  while (!m.empty() && m.back() == ' ') m.pop_back();
  return m;
}

HttpResponse json_response(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

HttpResponse error_response(const ApiError& e) {
  HttpResponse r = json_response(e.code(), e.status());
  if (e.retry_after() > 0) r.headers.emplace_back("Retry-After", std::to_string(e.retry_after()));
  return r;
}

ApiError resource_not_found() {
  return ApiError(404, "NotFound", "the server could not find the requested resource", json::object());
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// Body of a create/update: JSON, or YAML when sent as such. Malformed → 400.
json parse_object_body(const HttpRequest& req) {
  json body;
  const std::string mt = media_type(req.content_type);
  try {
    if (mt == "application/vnd.kubernetes.protobuf") body = decode_kubernetes_protobuf(req.body);
    else if (mt == "application/yaml" || mt == "application/apply-patch+yaml") body = testing::yaml_to_nlohmann(req.body);
    else body = json::parse(req.body);
  } catch (const std::exception& e) {
    throw bad_request(std::string("the object provided is unrecognized: ") + e.what());
  }
  if (!body.is_object()) throw bad_request("the object provided is not a JSON object");
  if (body.contains("metadata") && !body["metadata"].is_object())
    throw bad_request("metadata must be an object");
  return body;
}

std::string meta_string(const json& obj, const char* key) {
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) return "";
  const json& m = obj["metadata"];
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "";
}

// The object without the parts a generation ignores.
json desired_state(const json& obj, GenerationPolicy policy) {
  if (policy == GenerationPolicy::Spec) return obj.value("spec", json());
  json copy = obj;
  copy.erase("metadata");
  copy.erase("status");
  return copy;
}

// managedFields timestamps alone do not make an update (fieldmanager ignores timestamp-only changes).
json without_times(json obj) {
  if (obj.contains("metadata") && obj["metadata"].contains("managedFields") &&
      obj["metadata"]["managedFields"].is_array())
    for (auto& e : obj["metadata"]["managedFields"])
      if (e.is_object()) e.erase("time");
  return obj;
}

// Removes what `schema` does not declare (the pruning half of validate_schema's unknown-field check).
void prune_unknown(const json& schema, json& value, bool is_root) {
  if (!schema.is_object()) return;
  if (value.is_array() && schema.contains("items")) {
    for (auto& item : value) prune_unknown(schema["items"], item, false);
    return;
  }
  if (!value.is_object() || schema.value("x-kubernetes-preserve-unknown-fields", false)) return;
  const bool embedded = is_root || schema.value("x-kubernetes-embedded-resource", false);
  const json props = schema.value("properties", json::object());
  const json additional = schema.value("additionalProperties", json());
  for (auto it = value.begin(); it != value.end();) {
    const std::string key = it.key();
    if (embedded && (key == "apiVersion" || key == "kind" || key == "metadata")) {
      ++it;
    } else if (props.is_object() && props.contains(key)) {
      prune_unknown(props[key], it.value(), false);
      ++it;
    } else if (additional.is_object()) {
      prune_unknown(additional, it.value(), false);
      ++it;
    } else if (additional.is_boolean() && additional.get<bool>()) {
      ++it;
    } else {
      it = value.erase(it);
    }
  }
}

// duration.HumanDuration, as kubectl shows ages.
std::string human_age(const std::string& rfc3339) {
  std::tm tm{};
  if (!strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return "<unknown>";
  const long long secs = static_cast<long long>(std::time(nullptr) - timegm(&tm));
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

// The server-side printing kubectl asks for (Accept: ...;as=Table;g=meta.k8s.io): the columns kube-apiserver's
// printers give the types kubectl-mindie's users look at, Name and Age for the rest.
json to_table(const std::string& kind, const std::vector<json>& objects, const json& list_meta) {
  const auto col = [](const char* name, const char* type, int priority = 0) {
    return json{{"name", name}, {"type", type}, {"format", std::string(name) == "Name" ? "name" : ""},
                {"description", ""}, {"priority", priority}};
  };
  json columns = {col("Name", "string")};
  if (kind == "Pod")
    for (auto c : {col("Ready", "string"), col("Status", "string"), col("Restarts", "string")}) columns.push_back(c);
  if (kind == "Namespace") columns.push_back(col("Status", "string"));
  if (kind == "ConfigMap") columns.push_back(col("Data", "integer"));
  columns.push_back(col("Age", "string"));
  if (kind == "Pod")
    for (auto c : {col("IP", "string", 1), col("Node", "string", 1)}) columns.push_back(c);
  json rows = json::array();
  for (const auto& o : objects) {
    const json meta = o.value("metadata", json::object());
    const json status = o.value("status", json::object());
    json cells = {meta.value("name", "")};
    if (kind == "Pod") {
      const json cs = status.value("containerStatuses", json::array());
      std::size_t ready = 0, restarts = 0;
      for (const auto& c : cs) {
        ready += c.value("ready", false) ? 1 : 0;
        restarts += c.value("restartCount", 0);
      }
      const std::size_t total = o.value("spec", json::object()).value("containers", json::array()).size();
      cells.push_back(std::to_string(ready) + "/" + std::to_string(total));
      cells.push_back(meta.contains("deletionTimestamp") ? "Terminating" : status.value("phase", "Pending"));
      cells.push_back(std::to_string(restarts));
    }
    if (kind == "Namespace") cells.push_back(status.value("phase", "Active"));
    if (kind == "ConfigMap")
      cells.push_back(o.value("data", json::object()).size() + o.value("binaryData", json::object()).size());
    cells.push_back(human_age(meta.value("creationTimestamp", "")));
    if (kind == "Pod") {
      cells.push_back(status.value("podIP", "<none>"));
      cells.push_back(o.value("spec", json::object()).value("nodeName", "<none>"));
    }
    json partial = meta;
    partial.erase("managedFields");
    rows.push_back({{"cells", cells},
                    {"object", {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"},
                                {"metadata", partial}}}});
  }
  return {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", list_meta},
          {"columnDefinitions", columns}, {"rows", rows}};
}

bool wants_table(const HttpRequest& req) { return req.accept.find("as=Table") != std::string::npos; }

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// faults

Fault parse_fault(const std::string& spec) {
  // METHOD:REGEX:KIND[:COUNT[:AFTER]] — the regex may contain ':', so KIND, COUNT and AFTER are taken from the
  // right: numbers, up to a hang/drop keyword or three fields.
  constexpr const char* kSyntax = "expected METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]] (KIND: 4xx/5xx code, hang or drop)";
  const auto first = spec.find(':');
  if (first == std::string::npos) throw std::invalid_argument(kSyntax);
  const auto is_number = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 9;
  };
  const auto is_keyword = [](const std::string& s) { return s == "hang" || s == "drop"; };
  std::vector<std::string> fields;  // the trailing fields, left to right: KIND[, COUNT[, AFTER]]
  std::string rest = spec.substr(first + 1);
  while (fields.size() < 3) {
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos) break;
    const std::string field = rest.substr(colon + 1);
    if (!is_number(field) && !is_keyword(field)) break;
    fields.insert(fields.begin(), field);
    rest = rest.substr(0, colon);
    if (is_keyword(field)) break;  // a keyword KIND is the leftmost trailing field
  }
  if (fields.empty()) throw std::invalid_argument(std::string("missing KIND in fault ") + spec + ": " + kSyntax);
  Fault f;
  f.method = spec.substr(0, first);
  if (f.method.empty()) throw std::invalid_argument("missing METHOD in fault " + spec + " (use * for any)");
  f.path_pattern = rest;
  const std::string& kind = fields[0];
  if (kind == "hang") {
    f.disruption = Disruption::Hang;
  } else if (kind == "drop") {
    f.disruption = Disruption::Drop;
  } else {
    f.code = std::stoi(kind);
    if (f.code < 400 || f.code > 599) throw std::invalid_argument("fault CODE must be 4xx or 5xx: " + spec);
  }
  if (fields.size() >= 2) f.remaining = std::stoi(fields[1]);
  if (fields.size() == 3) f.after = std::stoi(fields[2]);
  try {
    f.path = std::regex(f.path_pattern);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("bad PATH_REGEX in fault " + spec + ": " + e.what());
  }
  return f;
}

// ---------------------------------------------------------------------------------------------------------------
// request plumbing

struct ApiServer::Target {
  const ResourceType* rt = nullptr;
  std::string ns;
  std::string name;
  std::string subresource;
};

struct ApiServer::WriteContext {
  WriteContext(std::string manager_, std::string subresource_ = "", std::string field_validation_ = "Warn")
      : manager(std::move(manager_)), subresource(std::move(subresource_)),
        field_validation(std::move(field_validation_)) {}

  std::string manager;
  std::string subresource;
  std::string field_validation;
  bool apply = false;
  bool internal = false;  // a write by the simulated operator: keeps status on create
  std::vector<std::string> warnings;
};

ApiServer::ApiServer(Registry registry, ServerOptions options)
    : registry_(std::move(registry)), options_(std::move(options)) {
  const ResourceType& ns_type = registry_.by_kind("v1", "Namespace");
  std::set<std::string> names{"default"};
  names.insert(options_.namespaces.begin(), options_.namespaces.end());
  for (const auto& n : names) {
    WriteContext ctx("sandbox");
    commit(ns_type, std::nullopt, {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", n}}}}, ctx);
  }
}

HttpResponse ApiServer::handle(const HttpRequest& req) {
  std::lock_guard lock(mu_);
  try {
    if (req.authorization != "Bearer " + options_.token)
      throw ApiError(401, "Unauthorized", "Unauthorized", json::object());
    for (auto& f : options_.faults) {
      if (f.remaining == 0 || (f.method != "*" && f.method != req.method) || !std::regex_match(req.path, f.path))
        continue;
      if (f.after > 0) {
        --f.after;
        continue;
      }
      if (f.remaining > 0) --f.remaining;
      if (f.disruption != Disruption::None) {
        HttpResponse r;
        r.status = 0;
        r.disruption = f.disruption;
        return r;
      }
      throw generic_error(f.code, "injected fault for " + req.method + " " + req.path, f.code == 429 ? 1 : 0);
    }
    const std::string dry_run = param(req, "dryRun");
    if (!dry_run.empty() && dry_run != "All")
      throw invalid({"meta.k8s.io", "", "CreateOptions", ""},
                    {{"FieldValueNotSupported", "Unsupported value: \"" + dry_run + "\": supported values: \"All\"",
                      "dryRun"}});
    if (dry_run.empty()) return route(req);
    // Dry run: the request runs in full against a copy that is thrown away.
    Store saved = store_;
    HttpResponse res;
    try {
      res = route(req);
    } catch (...) {
      store_ = std::move(saved);
      throw;
    }
    store_ = std::move(saved);
    return res;
  } catch (const ApiError& e) {
    return error_response(e);
  } catch (const std::exception& e) {
    return error_response(generic_error(500, std::string("internal error: ") + e.what()));
  }
}

HttpResponse ApiServer::route(const HttpRequest& req) {
  const std::string& p = req.path;
  if (p == "/version")
    return json_response(200, {{"major", "1"},
                               {"minor", "32"},
                               {"gitVersion", "v1.32.0-mindie-sandbox"},
                               {"gitCommit", "0000000000000000000000000000000000000000"},
                               {"gitTreeState", "clean"},
                               {"buildDate", "2025-01-01T00:00:00Z"},
                               {"goVersion", "go1.23.0"},
                               {"compiler", "gc"},
                               {"platform", "linux/amd64"}});
  if (p == "/healthz" || p == "/livez" || p == "/readyz") {
    HttpResponse r;
    r.body = "ok";
    r.content_type = "text/plain";
    return r;
  }
  const std::vector<std::string> seg = split_path(p);
  if (seg.empty()) throw resource_not_found();
  std::string group, version;
  std::size_t rest_at = 0;
  if (seg[0] == "api") {
    if (seg.size() == 1) return json_response(200, registry_.api_versions());
    group = "";
    version = seg[1];
    rest_at = 2;
  } else if (seg[0] == "apis") {
    if (seg.size() == 1) return json_response(200, registry_.group_list());
    if (seg.size() == 2) {
      auto g = registry_.group(seg[1]);
      if (!g) throw resource_not_found();
      return json_response(200, *g);
    }
    group = seg[1];
    version = seg[2];
    rest_at = 3;
  } else if (seg[0] == "openapi" && seg.size() >= 2 && seg[1] == "v3") {
    // kubectl reads these to learn that fieldValidation is done server-side (it then skips client-side schemas).
    if (seg.size() == 2) return json_response(200, registry_.openapi_v3_index());
    std::optional<json> doc;
    if (seg.size() == 4 && seg[2] == "api") doc = registry_.openapi_v3("", seg[3]);
    if (seg.size() == 5 && seg[2] == "apis") doc = registry_.openapi_v3(seg[3], seg[4]);
    if (!doc) throw resource_not_found();
    return json_response(200, *doc);
  } else {
    throw resource_not_found();  // /openapi/v2 and anything else
  }
  const std::vector<std::string> rest(seg.begin() + static_cast<std::ptrdiff_t>(rest_at), seg.end());
  if (rest.empty()) {
    auto list = registry_.resource_list(group, version);
    if (!list) throw resource_not_found();
    return json_response(200, *list);
  }

  Target t;
  std::string plural;
  std::vector<std::string> tail;
  if (rest[0] == "namespaces" && rest.size() >= 3 && !(group.empty() && rest.size() == 3 &&
                                                         (rest[2] == "status" || rest[2] == "finalize"))) {
    t.ns = rest[1];
    plural = rest[2];
    tail.assign(rest.begin() + 3, rest.end());
  } else {
    plural = rest[0];
    tail.assign(rest.begin() + 1, rest.end());
  }
  if (tail.size() > 2) throw resource_not_found();
  if (!tail.empty()) t.name = tail[0];
  if (tail.size() == 2) t.subresource = tail[1];
  t.rt = registry_.find(group, version, plural);
  if (!t.rt) throw resource_not_found();
  if (!t.rt->namespaced && !t.ns.empty()) throw resource_not_found();
  if (t.rt->namespaced && t.ns.empty() && !t.name.empty()) throw resource_not_found();
  if (!t.subresource.empty() && !(t.subresource == "status" && t.rt->status_subresource))
    throw resource_not_found();
  return serve_resource(req, t);
}

HttpResponse ApiServer::serve_resource(const HttpRequest& req, const Target& t) {
  const std::string& m = req.method;
  if (t.name.empty()) {
    if (m == "GET") {
      if (param(req, "watch") == "1" || param(req, "watch") == "true")
        throw method_not_allowed("watch is not supported by the sandbox API server");
      return list_objects(req, t);
    }
    if (m == "POST") return create_object(req, t);
    if (m == "DELETE") return delete_collection(req, t);
  } else {
    if (m == "GET") return get_object(req, t);
    if (m == "PUT") return update_object(req, t);
    if (m == "PATCH") return patch_object(req, t);
    if (m == "DELETE" && t.subresource.empty()) return delete_object(req, t);
  }
  throw method_not_allowed("the server does not allow this method on the requested resource");
}

void ApiServer::require_namespace(const std::string& ns) const {
  if (!store_.get(registry_.by_kind("v1", "Namespace").key(), "", ns))
    throw not_found({"", "namespaces", "Namespace", ns});
}

// ---------------------------------------------------------------------------------------------------------------
// reads

HttpResponse ApiServer::get_object(const HttpRequest& req, const Target& t) {
  auto obj = store_.get(t.rt->key(), t.ns, t.name);
  if (!obj) throw not_found(t.rt->target(t.name));
  if (wants_table(req))
    return json_response(200, to_table(t.rt->kind, {*obj}, {{"resourceVersion", meta_string(*obj, "resourceVersion")}}));
  return json_response(200, *obj);
}

HttpResponse ApiServer::list_objects(const HttpRequest& req, const Target& t) {
  std::optional<LabelSelector> labels;
  std::optional<FieldSelector> fields;
  try {
    labels = LabelSelector::parse(param(req, "labelSelector"));
    fields = FieldSelector::parse(param(req, "fieldSelector"), t.rt->kind);
  } catch (const SelectorError& e) {
    throw bad_request(e.what());
  }
  std::size_t limit = 0;
  if (const std::string l = param(req, "limit"); !l.empty()) {
    if (l.find_first_not_of("0123456789") != std::string::npos || l.size() > 9)
      throw bad_request("limit: invalid value \"" + l + "\"");
    limit = std::stoul(l);
  }
  std::string list_rv = std::to_string(store_.revision());
  std::pair<std::string, std::string> after;
  bool continuing = false;
  if (const std::string token = param(req, "continue"); !token.empty()) {
    json decoded;
    auto raw = base64_decode(token);
    try {
      decoded = json::parse(raw.value_or(""));
    } catch (const json::exception&) {
    }
    if (!decoded.is_object() || !decoded.contains("rv") || !decoded["rv"].is_string() ||
        !decoded.contains("ns") || !decoded["ns"].is_string() || !decoded.contains("name") ||
        !decoded["name"].is_string())
      throw bad_request("continue key is not valid: invalid continue token");
    list_rv = decoded["rv"];
    after = {decoded["ns"], decoded["name"]};
    continuing = true;
  }

  std::vector<json> items;
  std::size_t remaining = 0;
  for (const auto& obj : store_.list(t.rt->key(), t.ns)) {
    const std::pair<std::string, std::string> key{meta_string(obj, "namespace"), meta_string(obj, "name")};
    if (continuing && key <= after) continue;
    if (!labels->matches(obj["metadata"].value("labels", json::object())) || !fields->matches(obj)) continue;
    if (limit > 0 && items.size() == limit) {
      ++remaining;
      continue;
    }
    items.push_back(obj);
  }
  json meta = {{"resourceVersion", list_rv}};
  if (remaining > 0) {
    const json& last = items.back();
    // An opaque token, as the API promises: base64 of where the next page starts and at which revision.
    meta["continue"] = base64_encode(
        json{{"rv", list_rv}, {"ns", meta_string(last, "namespace")}, {"name", meta_string(last, "name")}}.dump());
    if (param(req, "labelSelector").empty() && param(req, "fieldSelector").empty())
      meta["remainingItemCount"] = remaining;
  }
  if (wants_table(req)) return json_response(200, to_table(t.rt->kind, items, meta));
  return json_response(200, {{"kind", t.rt->kind + "List"},
                             {"apiVersion", t.rt->api_version()},
                             {"metadata", meta},
                             {"items", items}});
}

// ---------------------------------------------------------------------------------------------------------------
// validation and commit

void ApiServer::validate(const ResourceType& rt, json& obj, WriteContext& ctx) {
  std::vector<StatusCause> causes;
  const std::string name = meta_string(obj, "name");
  if (rt.kind == "Namespace" || rt.kind == "Service") {
    if (!is_dns1123_label(name))
      causes.push_back({"FieldValueInvalid",
                        "Invalid value: \"" + name +
                            "\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                            "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
                            "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                        "metadata.name"});
  } else if (rt.group == "rbac.authorization.k8s.io") {
    // RBAC names only need to be valid path segments.
    if (name.empty() || name == "." || name == ".." || name.find_first_of("/%") != std::string::npos)
      causes.push_back({"FieldValueInvalid", "Invalid value: \"" + name + "\": may not contain '/' or '%'",
                        "metadata.name"});
  } else if (!is_dns1123_subdomain(name)) {
    causes.push_back({"FieldValueInvalid",
                      "Invalid value: \"" + name +
                          "\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                          "regex used for validation is "
                          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                      "metadata.name"});
  }
  const json& meta = obj["metadata"];
  if (meta.contains("labels") && !meta["labels"].is_null()) {
    if (!meta["labels"].is_object()) throw bad_request("metadata.labels must be an object of strings");
    for (const auto& [k, v] : meta["labels"].items()) {
      if (!v.is_string()) throw bad_request("metadata.labels." + k + " must be a string");
      if (!is_qualified_name(k))
        causes.push_back({"FieldValueInvalid", "Invalid value: \"" + k + "\": name part must consist of "
                                               "alphanumeric characters, '-', '_' or '.'", "metadata.labels"});
      if (!is_label_value(v.get<std::string>()))
        causes.push_back({"FieldValueInvalid", "Invalid value: \"" + v.get<std::string>() +
                                                   "\": a valid label must be an empty string or consist of "
                                                   "alphanumeric characters, '-', '_' or '.'",
                          "metadata.labels"});
    }
  }
  if (meta.contains("annotations") && !meta["annotations"].is_null()) {
    if (!meta["annotations"].is_object()) throw bad_request("metadata.annotations must be an object of strings");
    std::size_t total = 0;
    for (const auto& [k, v] : meta["annotations"].items()) {
      if (!v.is_string()) throw bad_request("metadata.annotations." + k + " must be a string");
      total += k.size() + v.get_ref<const std::string&>().size();
    }
    if (total > kMaxAnnotationBytes)
      causes.push_back({"FieldValueTooLong", "Too long: must have at most 262144 bytes", "metadata.annotations"});
  }
  if (rt.kind == "ConfigMap") {
    static const std::regex key_re("^[-._a-zA-Z0-9]+$");
    std::size_t total = 0;
    for (const char* section : {"data", "binaryData"}) {
      if (!obj.contains(section) || obj[section].is_null()) continue;
      if (!obj[section].is_object()) throw bad_request(std::string(section) + " must be an object of strings");
      for (const auto& [k, v] : obj[section].items()) {
        if (!v.is_string()) throw bad_request(std::string(section) + "." + k + " must be a string");
        if (k.size() > 253 || !std::regex_match(k, key_re))
          causes.push_back({"FieldValueInvalid",
                            "Invalid value: \"" + k +
                                "\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                                "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                                "'[-._a-zA-Z0-9]+')",
                            std::string(section) + "[" + k + "]"});
        total += k.size() + v.get_ref<const std::string&>().size();
      }
    }
    if (total > kMaxConfigMapBytes)
      causes.push_back({"FieldValueTooLong", "Too long: must have at most 1048576 bytes", ""});
  }
  if (rt.schema) {
    std::vector<testing::SchemaViolation> unknown;
    for (auto& v : testing::validate_schema(*rt.schema, obj)) {
      if (v.reason == "FieldValueUnknown") unknown.push_back(std::move(v));
      else causes.push_back({v.reason, v.message, v.field});
    }
    if (!unknown.empty() && ctx.field_validation == "Strict") {
      std::string msg;
      for (const auto& u : unknown) msg += (msg.empty() ? "" : ", ") + u.message;
      throw bad_request("strict decoding error: " + msg);
    }
    for (const auto& u : unknown)
      if (ctx.field_validation == "Warn") ctx.warnings.push_back(u.message);
    // Unknown fields are dropped, as kube-apiserver prunes them for structural schemas.
    if (!unknown.empty()) prune_unknown(*rt.schema, obj, true);
  }
  if (!causes.empty()) throw invalid(rt.target(name), causes);
}

json ApiServer::commit(const ResourceType& rt, const std::optional<json>& old, json obj, WriteContext& ctx) {
  const std::string now = now_rfc3339();
  json& meta = obj["metadata"];
  if (old) {
    const json& om = (*old)["metadata"];
    for (const char* k : {"uid", "creationTimestamp", "generation", "deletionTimestamp"}) {
      if (om.contains(k)) meta[k] = om[k];
      else meta.erase(k);
    }
    if (!ctx.apply) {
      if (om.contains("managedFields")) meta["managedFields"] = om["managedFields"];
      else meta.erase("managedFields");
    }
    if (ctx.subresource == "status") {
      // The status subresource changes status only.
      json merged = *old;
      if (obj.contains("status")) merged["status"] = obj["status"];
      else merged.erase("status");
      merged["metadata"]["managedFields"] = meta.value("managedFields", json::array());
      obj = std::move(merged);
    } else if (rt.status_subresource) {
      if (old->contains("status")) obj["status"] = (*old)["status"];
      else obj.erase("status");
    }
  } else {
    meta["uid"] = new_uid();
    meta["creationTimestamp"] = now;
    if (rt.generation != GenerationPolicy::None) meta["generation"] = 1;
    else meta.erase("generation");
    meta.erase("deletionTimestamp");
    if (!ctx.apply) meta.erase("managedFields");
    if (rt.status_subresource && !ctx.internal) {
      obj.erase("status");
      if (rt.kind == "Namespace") obj["status"] = {{"phase", "Active"}};
      if (rt.kind == "Pod") obj["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
    }
  }
  if (rt.kind == "Namespace" && !obj.contains("spec")) obj["spec"] = {{"finalizers", {"kubernetes"}}};
  obj["apiVersion"] = rt.api_version();
  obj["kind"] = rt.kind;
  if (!rt.namespaced) obj["metadata"].erase("namespace");
  obj["metadata"].erase("selfLink");

  validate(rt, obj, ctx);

  if (old && rt.generation != GenerationPolicy::None &&
      desired_state(obj, rt.generation) != desired_state(*old, rt.generation))
    obj["metadata"]["generation"] = (*old)["metadata"].value("generation", 0) + 1;

  if (!ctx.apply) {
    Writer w{ctx.manager, rt.api_version(), now, ctx.subresource,
             ctx.subresource == "status" ? OwnershipScope::Status
             : rt.status_subresource     ? OwnershipScope::MainWithoutStatus
                                         : OwnershipScope::Main};
    record_update(old ? *old : json(), obj, w);
  }
  if (old) {
    obj["metadata"]["resourceVersion"] = (*old)["metadata"]["resourceVersion"];
    if (without_times(obj) == without_times(*old)) return *old;  // a no-op write stores nothing
  }
  json stored = store_.put(rt.key(), std::move(obj));
  if (options_.simulate_operator && rt.kind == "InferServiceSet" && rt.group == "mindcluster.huawei.com" &&
      ctx.subresource.empty())
    reconcile_infer_service_set(stored);
  return stored;
}

// ---------------------------------------------------------------------------------------------------------------
// writes

namespace {

std::string field_manager(const HttpRequest& req, bool apply) {
  std::string m = param(req, "fieldManager");
  if (m.size() > kMaxFieldManagerLength)
    throw invalid({"meta.k8s.io", "", "PatchOptions", ""},
                  {{"FieldValueTooLong", "Too long: may not be more than 128 bytes", "fieldManager"}});
  if (m.empty() && apply)
    throw invalid({"meta.k8s.io", "", "PatchOptions", ""},
                  {{"FieldValueRequired", "Required value: is required for apply patch", "fieldManager"}});
  // Without fieldManager, kube-apiserver derives the manager from the User-Agent; "unknown" stands in for it.
  return m.empty() ? "unknown" : m;
}

std::string field_validation(const HttpRequest& req) {
  std::string v = param(req, "fieldValidation");
  if (v.empty()) return "Warn";
  if (v != "Strict" && v != "Warn" && v != "Ignore")
    throw bad_request("fieldValidation: Unsupported value: \"" + v + "\": supported values: \"Ignore\", "
                      "\"Strict\", \"Warn\"");
  return v;
}

// apiVersion/kind must name the addressed type when present; absent ones are filled in.
void check_type(const ResourceType& rt, json& obj) {
  if (obj.contains("apiVersion") && obj["apiVersion"] != rt.api_version())
    throw bad_request("the API version in the data (" +
                      (obj["apiVersion"].is_string() ? obj["apiVersion"].get<std::string>() : obj["apiVersion"].dump()) +
                      ") does not match the expected API version (" + rt.api_version() + ")");
  if (obj.contains("kind") && obj["kind"] != rt.kind)
    throw bad_request("the kind in the data does not match the expected kind (" + rt.kind + ")");
  if (!obj.contains("metadata")) obj["metadata"] = json::object();
  for (const char* k : {"name", "namespace", "resourceVersion", "generateName"})
    if (obj["metadata"].contains(k) && !obj["metadata"][k].is_string() && !obj["metadata"][k].is_null())
      throw bad_request(std::string("metadata.") + k + " must be a string");
}

void check_namespace(const ResourceType& rt, json& obj, const std::string& ns) {
  if (!rt.namespaced) return;
  const std::string given = meta_string(obj, "namespace");
  if (!given.empty() && given != ns)
    throw bad_request("the namespace of the provided object does not match the namespace sent on the request");
  obj["metadata"]["namespace"] = ns;
}

void check_name(json& obj, const std::string& name) {
  const std::string given = meta_string(obj, "name");
  if (given.empty()) obj["metadata"]["name"] = name;
  else if (given != name)
    throw bad_request("the name of the object (" + given + ") does not match the name on the URL (" + name + ")");
}

void add_warnings(HttpResponse& res, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) {
    std::string escaped;
    for (char c : w) {
      if (c == '"' || c == '\\') escaped.push_back('\\');
      escaped.push_back(c);
    }
    res.headers.emplace_back("Warning", "299 - \"" + escaped + "\"");
  }
}

}  // namespace

HttpResponse ApiServer::create_object(const HttpRequest& req, const Target& t) {
  if (!t.subresource.empty()) throw method_not_allowed("cannot create a subresource");
  json obj = parse_object_body(req);
  check_type(*t.rt, obj);
  check_namespace(*t.rt, obj, t.ns);
  WriteContext ctx(field_manager(req, false), "", field_validation(req));
  std::string name = meta_string(obj, "name");
  if (name.empty()) {
    const std::string prefix = meta_string(obj, "generateName");
    if (prefix.empty())
      throw invalid(t.rt->target(""),
                    {{"FieldValueRequired", "Required value: name or generateName is required", "metadata.name"}});
    name = prefix + random_suffix();
    obj["metadata"]["name"] = name;
  }
  if (t.rt->namespaced) require_namespace(t.ns);
  if (store_.get(t.rt->key(), t.ns, name)) throw already_exists(t.rt->target(name));
  obj["metadata"].erase("resourceVersion");
  HttpResponse res = json_response(201, commit(*t.rt, std::nullopt, std::move(obj), ctx));
  add_warnings(res, ctx.warnings);
  return res;
}

HttpResponse ApiServer::update_object(const HttpRequest& req, const Target& t) {
  json obj = parse_object_body(req);
  check_type(*t.rt, obj);
  check_namespace(*t.rt, obj, t.ns);
  check_name(obj, t.name);
  WriteContext ctx(field_manager(req, false), t.subresource, field_validation(req));
  auto old = store_.get(t.rt->key(), t.ns, t.name);
  if (!old) throw not_found(t.rt->target(t.name));
  const std::string rv = meta_string(obj, "resourceVersion");
  if (rv.empty() && t.rt->custom)
    throw invalid(t.rt->target(t.name), {{"FieldValueInvalid",
                                          "Invalid value: 0x0: must be specified for an update",
                                          "metadata.resourceVersion"}});
  if (!rv.empty() && rv != meta_string(*old, "resourceVersion"))
    throw conflict(t.rt->target(t.name),
                   "the object has been modified; please apply your changes to the latest version and try again");
  HttpResponse res = json_response(200, commit(*t.rt, old, std::move(obj), ctx));
  add_warnings(res, ctx.warnings);
  return res;
}

HttpResponse ApiServer::patch_object(const HttpRequest& req, const Target& t) {
  const std::string type = media_type(req.content_type);
  if (type == "application/apply-patch+yaml") return apply_object(req, t);
  if (type == "application/strategic-merge-patch+json" && t.rt->custom)
    throw unsupported_media_type("application/json-patch+json, application/merge-patch+json, "
                                 "application/apply-patch+yaml");
  if (type != "application/json-patch+json" && type != "application/merge-patch+json" &&
      type != "application/strategic-merge-patch+json")
    throw unsupported_media_type("application/json-patch+json, application/merge-patch+json, "
                                 "application/apply-patch+yaml, application/strategic-merge-patch+json");
  WriteContext ctx(field_manager(req, false), t.subresource, field_validation(req));
  json patch;
  try {
    patch = json::parse(req.body);
  } catch (const json::exception& e) {
    throw bad_request(std::string("error decoding patch: ") + e.what());
  }
  auto old = store_.get(t.rt->key(), t.ns, t.name);
  if (!old) throw not_found(t.rt->target(t.name));

  json patched;
  if (type == "application/json-patch+json") {
    // Structure errors are the client's malformed request (400); failing operations are 422 with nothing applied.
    if (!patch.is_array()) throw bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    static const std::set<std::string> ops = {"add", "remove", "replace", "move", "copy", "test"};
    for (const auto& op : patch) {
      if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !ops.count(op["op"].get<std::string>()) ||
          !op.contains("path") || !op["path"].is_string())
        throw bad_request("the server rejected our request due to an error in our request: invalid JSON Patch "
                          "operation " + op.dump());
      const std::string name = op["op"];
      if ((name == "add" || name == "replace" || name == "test") && !op.contains("value"))
        throw bad_request("the server rejected our request due to an error in our request: missing value in " +
                          op.dump());
      if ((name == "move" || name == "copy") && (!op.contains("from") || !op["from"].is_string()))
        throw bad_request("the server rejected our request due to an error in our request: missing from in " +
                          op.dump());
    }
    try {
      patched = old->patch(patch);
    } catch (const json::exception& e) {
      throw ApiError(422, "Invalid",
                     std::string("the server rejected our request due to an error in our request: ") + e.what(),
                     json::object());
    }
  } else {
    if (!patch.is_object()) throw bad_request("error decoding patch: a merge patch must be a JSON object");
    patched = *old;
    patched.merge_patch(patch);
  }
  if (!patched.is_object() || !patched.contains("metadata") || !patched["metadata"].is_object())
    throw ApiError(422, "Invalid", "the patch removed the object's metadata", json::object());
  check_type(*t.rt, patched);
  if (meta_string(patched, "name") != t.name || (t.rt->namespaced && meta_string(patched, "namespace") != t.ns))
    throw bad_request("the patch may not change the object's name or namespace");
  // A resourceVersion the patch sets is a precondition.
  if (const std::string rv = meta_string(patched, "resourceVersion");
      !rv.empty() && rv != meta_string(*old, "resourceVersion"))
    throw conflict(t.rt->target(t.name),
                   "the object has been modified; please apply your changes to the latest version and try again");
  HttpResponse res = json_response(200, commit(*t.rt, old, std::move(patched), ctx));
  add_warnings(res, ctx.warnings);
  return res;
}

HttpResponse ApiServer::apply_object(const HttpRequest& req, const Target& t) {
  WriteContext ctx(field_manager(req, true), t.subresource, field_validation(req));
  ctx.apply = true;
  const std::string force = param(req, "force");
  json config = parse_object_body(req);
  if (!config.contains("apiVersion") || !config.contains("kind"))
    throw bad_request("apiVersion and kind must be set in an apply configuration");
  check_type(*t.rt, config);
  check_namespace(*t.rt, config, t.ns);
  check_name(config, t.name);
  auto live = store_.get(t.rt->key(), t.ns, t.name);
  if (!live && t.rt->namespaced) require_namespace(t.ns);
  if (const std::string rv = meta_string(config, "resourceVersion"); !rv.empty()) {
    if (!live) throw not_found(t.rt->target(t.name));
    if (rv != meta_string(*live, "resourceVersion"))
      throw conflict(t.rt->target(t.name),
                     "the object has been modified; please apply your changes to the latest version and try again");
  }
  if (!live && !t.subresource.empty()) throw not_found(t.rt->target(t.name));
  const Writer w{ctx.manager, t.rt->api_version(), now_rfc3339(), t.subresource,
                 t.subresource == "status" ? OwnershipScope::Status
                 : t.rt->status_subresource ? OwnershipScope::MainWithoutStatus
                                            : OwnershipScope::Main};
  std::vector<ApplyConflict> conflicts;
  json merged = server_side_apply(live ? *live : json(), config, w, force == "true", conflicts);
  if (!conflicts.empty()) {
    json causes = json::array();
    std::map<std::string, std::vector<std::string>> by_manager;
    for (const auto& c : conflicts) {
      causes.push_back({{"reason", "FieldManagerConflict"},
                        {"message", "conflict with " + c.manager_display},
                        {"field", path_string(c.path)}});
      by_manager[c.manager_display].push_back(path_string(c.path));
    }
    std::string msg;
    if (conflicts.size() == 1) {
      msg = "Apply failed with 1 conflict: conflict with " + conflicts[0].manager_display + ": " +
            path_string(conflicts[0].path);
    } else {
      msg = "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: ";
      bool first = true;
      for (const auto& [m, paths] : by_manager) {
        msg += std::string(first ? "" : "\n") + "conflicts with " + m + ":";
        first = false;
        for (const auto& p : paths) msg += "\n- " + p;
      }
    }
    throw ApiError(409, "Conflict", msg, {{"causes", causes}});
  }
  HttpResponse res = live ? json_response(200, commit(*t.rt, live, std::move(merged), ctx))
                          : json_response(201, commit(*t.rt, std::nullopt, std::move(merged), ctx));
  add_warnings(res, ctx.warnings);
  return res;
}

// ---------------------------------------------------------------------------------------------------------------
// deletes

std::optional<json> ApiServer::remove_cascading(const ResourceType& rt, const std::string& ns,
                                                const std::string& name, bool orphan) {
  auto removed = store_.remove(rt.key(), ns, name);
  if (!removed) return std::nullopt;
  const std::string uid = meta_string(*removed, "uid");
  if (rt.kind == "Namespace") {
    for (const auto& t : registry_.all())
      if (t.namespaced)
        for (const auto& o : store_.list(t.key(), name)) store_.remove(t.key(), name, meta_string(o, "name"));
  }
  // The garbage collector: dependents go with their owner, or lose the reference when orphaned.
  for (const auto& [type_key, obj] : store_.all()) {
    const json refs = obj["metadata"].value("ownerReferences", json::array());
    if (!refs.is_array()) continue;
    json kept = json::array();
    for (const auto& r : refs)
      if (!(r.is_object() && r.value("uid", json("")) == uid)) kept.push_back(r);
    if (kept.size() == refs.size()) continue;
    const ResourceType* dep = nullptr;
    for (const auto& t : registry_.all())
      if (t.key() == type_key) dep = &t;
    if (!dep) continue;
    if (orphan) {
      json updated = obj;
      if (kept.empty()) updated["metadata"].erase("ownerReferences");
      else updated["metadata"]["ownerReferences"] = kept;
      store_.put(type_key, std::move(updated));
    } else {
      remove_cascading(*dep, meta_string(obj, "namespace"), meta_string(obj, "name"), false);
    }
  }
  return removed;
}

namespace {

// DeleteOptions from the body (kubectl sends them) or the query.
struct DeleteOptions {
  std::string propagation;
  std::string uid;
  std::string resource_version;
};

DeleteOptions delete_options(const HttpRequest& req) {
  DeleteOptions o;
  o.propagation = param(req, "propagationPolicy");
  if (!req.body.empty()) {
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::exception& e) {
      throw bad_request(std::string("invalid DeleteOptions: ") + e.what());
    }
    if (!body.is_object()) throw bad_request("invalid DeleteOptions: not an object");
    if (body.contains("propagationPolicy") && body["propagationPolicy"].is_string())
      o.propagation = body["propagationPolicy"];
    const json pre = body.value("preconditions", json::object());
    if (pre.is_object()) {
      if (pre.contains("uid") && pre["uid"].is_string()) o.uid = pre["uid"];
      if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string())
        o.resource_version = pre["resourceVersion"];
    }
  }
  if (!o.propagation.empty() && o.propagation != "Foreground" && o.propagation != "Background" &&
      o.propagation != "Orphan")
    throw bad_request("propagationPolicy: Unsupported value: \"" + o.propagation + "\"");
  return o;
}

}  // namespace

HttpResponse ApiServer::delete_object(const HttpRequest& req, const Target& t) {
  const DeleteOptions opts = delete_options(req);
  auto current = store_.get(t.rt->key(), t.ns, t.name);
  if (!current) throw not_found(t.rt->target(t.name));
  if (!opts.uid.empty() && opts.uid != meta_string(*current, "uid"))
    throw conflict(t.rt->target(t.name), "Precondition failed: UID in precondition: " + opts.uid +
                                             ", UID in object meta: " + meta_string(*current, "uid"));
  if (!opts.resource_version.empty() && opts.resource_version != meta_string(*current, "resourceVersion"))
    throw conflict(t.rt->target(t.name), "the object has been modified; please apply your changes to the latest "
                                         "version and try again");
  json removed = *remove_cascading(*t.rt, t.ns, t.name, opts.propagation == "Orphan");
  // Objects deleted gracefully (pods, namespaces) and custom resources come back as the object; others as Status.
  if (t.rt->kind == "Pod" || t.rt->kind == "Namespace" || t.rt->custom) {
    removed["metadata"]["deletionTimestamp"] = now_rfc3339();
    if (t.rt->kind == "Namespace") removed["status"] = {{"phase", "Terminating"}};
    return json_response(200, removed);
  }
  json details = {{"name", t.name}, {"kind", t.rt->plural}, {"uid", meta_string(removed, "uid")}};
  if (!t.rt->group.empty()) details["group"] = t.rt->group;
  return json_response(200, {{"kind", "Status"},
                             {"apiVersion", "v1"},
                             {"metadata", json::object()},
                             {"status", "Success"},
                             {"details", details}});
}

HttpResponse ApiServer::delete_collection(const HttpRequest& req, const Target& t) {
  const DeleteOptions opts = delete_options(req);
  HttpRequest as_list = req;
  as_list.accept.clear();  // the deleted objects come back as a plain list
  HttpResponse listed = list_objects(as_list, t);
  json list = json::parse(listed.body);
  for (const auto& obj : list["items"])
    remove_cascading(*t.rt, meta_string(obj, "namespace"), meta_string(obj, "name"), opts.propagation == "Orphan");
  list["metadata"].erase("continue");
  list["metadata"]["resourceVersion"] = std::to_string(store_.revision());
  return json_response(200, list);
}

// ---------------------------------------------------------------------------------------------------------------
// the infer-operator simulation

void ApiServer::reconcile_infer_service_set(const json& iss) {
  const ResourceType& pods_t = registry_.by_kind("v1", "Pod");
  const ResourceType& iss_t = registry_.by_kind("mindcluster.huawei.com/v1", "InferServiceSet");
  const std::string ns = meta_string(iss, "namespace");
  const std::string name = meta_string(iss, "name");
  const std::string uid = meta_string(iss, "uid");
  const std::string now = now_rfc3339();
  const std::vector<InstanceRef> wanted = desired_instances(iss);

  // Pods this set owns, by instance; instances no longer wanted go away whole.
  std::vector<InstanceRef> present;
  for (const auto& pod : store_.list(pods_t.key(), ns)) {
    bool owned = false;
    for (const auto& r : pod["metadata"].value("ownerReferences", json::array()))
      if (r.is_object() && r.value("uid", json("")) == uid) owned = true;
    InstanceRef ref;
    if (!owned || !instance_of_pod(pod, name, ref)) continue;
    if (std::find(wanted.begin(), wanted.end(), ref) == wanted.end())
      remove_cascading(pods_t, ns, meta_string(pod, "name"), false);
    else if (std::find(present.begin(), present.end(), ref) == present.end())
      present.push_back(ref);
  }
  // Existing instances are never updated; missing ones are created from the current template.
  for (const auto& want : wanted) {
    if (std::find(present.begin(), present.end(), want) != present.end()) continue;
    for (auto& pod : pods_for_instance(iss, want, now)) {
      if (store_.get(pods_t.key(), ns, meta_string(pod, "name"))) continue;
      WriteContext ctx("infer-operator");
      ctx.internal = true;
      try {
        commit(pods_t, std::nullopt, std::move(pod), ctx);
      } catch (const ApiError&) {
        // A pod the API would reject (say, a template label that is no label) is not created; the real operator
        // only logs such failures, and the InferServiceSet write itself has succeeded.
      }
    }
  }

  std::vector<json> pods;
  for (const auto& pod : store_.list(pods_t.key(), ns)) {
    InstanceRef ref;
    if (instance_of_pod(pod, name, ref)) pods.push_back(pod);
  }
  json updated = iss;
  updated["status"] = infer_service_set_status(iss, pods, iss.value("status", json::object()), now);
  WriteContext ctx("infer-operator", "status");
  ctx.internal = true;
  try {
    commit(iss_t, iss, std::move(updated), ctx);
  } catch (const ApiError&) {
    // As above: a status the schema rejects stays unwritten.
  }
}

}  // namespace mindie::sandbox
