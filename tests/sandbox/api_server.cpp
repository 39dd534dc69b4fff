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
#include "table.h"

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

// MicroTime, as events.k8s.io's eventTime carries it.
std::string now_rfc3339_micro() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%06lldZ", static_cast<long long>(micros));
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

bool wants_table(const HttpRequest& req) { return req.accept.find("as=Table") != std::string::npos; }

bool has_finalizers(const json& obj) {
  const json& m = obj["metadata"];
  return m.contains("finalizers") && m["finalizers"].is_array() && !m["finalizers"].empty();
}

// A pod the taint manager evicted from an unreachable node (pod state Terminating): its kubelet never confirms the
// deletion, so only a forced delete (gracePeriodSeconds=0) removes it.
bool awaits_dead_kubelet(const ResourceType& rt, const json& obj) {
  if (rt.kind != "Pod" || !obj["metadata"].contains("deletionTimestamp")) return false;
  for (const auto& c : obj.value("status", json::object()).value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == "DisruptionTarget" && c.value("reason", "") == "DeletionByTaintManager")
      return true;
  return false;
}

// The types the simulated controllers create and keep: a client's write to one makes them reconcile.
bool controllers_own(const ResourceType& rt) {
  static const std::set<std::string> kinds = {"Pod", "Deployment", "StatefulSet", "ReplicaSet", "Service",
                                              "InferService", "InstanceSet"};
  return kinds.count(rt.kind) > 0;
}

bool is_watch(const HttpRequest& req) {
  const std::string w = param(req, "watch");
  return w == "1" || w == "true";
}

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
  pending_.clear();
  store_.set_observer([this](const StoreEvent& e) { pending_.push_back(e); });
}

HttpResponse ApiServer::handle(const HttpRequest& req) {
  std::lock_guard lock(mu_);
  dirty_namespaces_.clear();
  HttpResponse res = handle_locked(req);
  try {
    reconcile_dirty();
  } catch (const std::exception&) {
    // The simulated controllers only log their failures; the client's request has been answered.
  }
  dispatch();
  return res;
}

void ApiServer::shutdown() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  for (auto& w : watchers_) w->abort();
  watchers_.clear();
}

HttpResponse ApiServer::handle_locked(const HttpRequest& req) {
  try {
    if (req.authorization != "Bearer " + options_.token)
      throw ApiError(401, "Unauthorized", "Unauthorized", json::object());
    // The control endpoints are the test's side channel, not the API under test: no faults.
    if (req.path.rfind("/sandbox/", 0) == 0) return control(req);
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
      dirty_namespaces_.clear();
      pending_.clear();
      throw;
    }
    // Nothing of a dry run happened: no reconciling, no watch events.
    store_ = std::move(saved);
    dirty_namespaces_.clear();
    pending_.clear();
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
    if (m == "GET") return is_watch(req) ? watch_objects(req, t) : list_objects(req, t);
    if (m == "POST") return create_object(req, t);
    if (m == "DELETE") return delete_collection(req, t);
  } else {
    if (m == "GET") return is_watch(req) && t.subresource.empty() ? watch_objects(req, t) : get_object(req, t);
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

  // A continue token from before the last compaction can no longer give a consistent list (etcd: 410 Expired).
  if (continuing && std::stoull("0" + list_rv.substr(0, 18)) < store_.oldest_watchable())
    throw ApiError(410, "Expired",
                   "The provided continue parameter is too old to display a consistent list result. You can start a "
                   "new list without the continue parameter, or use the continue token in this response to retrieve "
                   "the remainder of the results. Continuing with the provided token results in an inconsistent list "
                   "- objects that were created, modified, or deleted between the time the first chunk was returned "
                   "and now may show up in the list.");

  // One ordered pass from where the page starts, copying only the page. Without selectors the rest is counted for
  // remainingItemCount; with them one more match is enough to know a next page exists.
  const bool selective = !param(req, "labelSelector").empty() || !param(req, "fieldSelector").empty();
  std::vector<ObjectPtr> items;
  std::size_t remaining = 0;
  static const json no_labels = json::object();
  store_.scan(t.rt->key(), t.ns, after, [&](const ObjectPtr& p) {
    const json& obj = *p;
    const json& meta = obj["metadata"];
    if (!labels->matches(meta.contains("labels") ? meta["labels"] : no_labels) || !fields->matches(obj)) return true;
    if (limit > 0 && items.size() == limit) {
      ++remaining;
      return !selective;
    }
    items.push_back(p);
    return true;
  });
  json meta = {{"resourceVersion", list_rv}};
  if (remaining > 0) {
    const json& last = *items.back();
    // An opaque token, as the API promises: base64 of where the next page starts and at which revision.
    meta["continue"] = base64_encode(
        json{{"rv", list_rv}, {"ns", meta_string(last, "namespace")}, {"name", meta_string(last, "name")}}.dump());
    if (!selective) meta["remainingItemCount"] = remaining;
  }
  if (wants_table(req)) {
    std::vector<json> objects;
    for (const auto& p : items) objects.push_back(*p);
    return json_response(200, to_table(t.rt->kind, objects, meta));
  }
  // Serialised straight from the stored versions: a page of 500 pods is never copied.
  HttpResponse res;
  res.body = "{\"apiVersion\":" + json(t.rt->api_version()).dump() + ",\"items\":[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) res.body += ',';
    res.body += items[i]->dump();
  }
  res.body += "],\"kind\":" + json(t.rt->kind + "List").dump() + ",\"metadata\":" + meta.dump() + "}";
  return res;
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
    for (const char* k : {"uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"}) {
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
    meta.erase("deletionGracePeriodSeconds");
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
  // kube-apiserver's nodePort allocator: a port one Service holds is refused to every other.
  if (rt.kind == "Service" && obj["spec"].contains("ports") && obj["spec"]["ports"].is_array()) {
    const std::string ns = obj["metadata"].value("namespace", ""), name = obj["metadata"].value("name", "");
    std::vector<StatusCause> causes;
    for (std::size_t i = 0; i < obj["spec"]["ports"].size(); ++i) {
      const json& port = obj["spec"]["ports"][i];
      if (!port.is_object() || !port.value("nodePort", json(0)).is_number_integer()) continue;
      const int node_port = port.value("nodePort", 0);
      if (node_port == 0) continue;
      for (const auto& other : store_.list(rt.key())) {
        if (meta_string(other, "namespace") == ns && meta_string(other, "name") == name) continue;
        for (const auto& p : other["spec"].value("ports", json::array()))
          if (p.is_object() && p.value("nodePort", json(0)) == node_port)
            causes.push_back({"FieldValueInvalid",
                              "Invalid value: " + std::to_string(node_port) + ": provided port is already allocated",
                              "spec.ports[" + std::to_string(i) + "].nodePort"});
      }
    }
    if (!causes.empty()) throw invalid(rt.target(name), causes);
  }

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
  if (!ctx.internal && rt.namespaced && controllers_own(rt))
    dirty_namespaces_.insert(meta_string(stored, "namespace"));
  // The last finalizer of a deleted object gone: the deletion completes.
  const json& sm = stored["metadata"];
  if (sm.contains("deletionTimestamp") && !has_finalizers(stored) && !awaits_dead_kubelet(rt, stored)) {
    remove_cascading(rt, meta_string(stored, "namespace"), meta_string(stored, "name"), false);
    return stored;
  }
  if (options_.simulate_operator && rt.kind == "InferServiceSet" && rt.group == "mindcluster.huawei.com" &&
      ctx.subresource.empty())
    reconcile_infer_service_set(stored);
  if (options_.simulate_operator && rt.kind == "StormService" && rt.group == "orchestration.aibrix.ai" &&
      ctx.subresource.empty())
    reconcile_storm_service(stored);
  // multi_deployment: a client's own Deployment (no owner) gets the deployment controller's ReplicaSet and pods.
  if (options_.simulate_operator && rt.kind == "Deployment" && rt.group == "apps" && ctx.subresource.empty() &&
      !ctx.internal && !stored["metadata"].contains("ownerReferences"))
    reconcile_workload(stored, now_rfc3339());
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
                                                const std::string& name, bool orphan, bool force) {
  const json* current = store_.find(rt.key(), ns, name);
  if (!current) return std::nullopt;
  if (has_finalizers(*current) || (awaits_dead_kubelet(rt, *current) && !force)) {
    // Graceful deletion that cannot complete yet: the object stays with its deletionTimestamp.
    if ((*current)["metadata"].contains("deletionTimestamp")) return *current;
    json marked = *current;
    marked["metadata"]["deletionTimestamp"] = now_rfc3339();
    marked["metadata"]["deletionGracePeriodSeconds"] = 0;
    return store_.put(rt.key(), std::move(marked));
  }
  if (rt.kind == "Pod" && !force && !(*current)["metadata"].contains("deletionTimestamp")) {
    // Graceful deletion: watchers see the pod terminating (MODIFIED) before its kubelet confirms it (DELETED).
    json marked = *current;
    marked["metadata"]["deletionTimestamp"] = now_rfc3339();
    marked["metadata"]["deletionGracePeriodSeconds"] =
        marked.value("spec", json::object()).value("terminationGracePeriodSeconds", json(30));
    store_.put(rt.key(), std::move(marked));
  }
  auto removed = store_.remove(rt.key(), ns, name);
  const std::string uid = meta_string(*removed, "uid");
  if (rt.kind == "Namespace") {
    for (const auto& t : registry_.all())
      if (t.namespaced)
        for (const auto& o : store_.list(t.key(), name)) store_.remove(t.key(), name, meta_string(o, "name"));
  }
  // The garbage collector: dependents go with their owner, or lose the reference when orphaned.
  for (const auto& [type_key, dep_ns, dep_name] : store_.dependents(uid)) {
    const ResourceType* dep = nullptr;
    for (const auto& t : registry_.all())
      if (t.key() == type_key) dep = &t;
    const json* obj = store_.find(type_key, dep_ns, dep_name);
    if (!dep || !obj) continue;
    if (orphan) {
      json updated = *obj;
      json kept = json::array();
      for (const auto& r : updated["metadata"]["ownerReferences"])
        if (!(r.is_object() && r.value("uid", json("")) == uid)) kept.push_back(r);
      if (kept.empty()) updated["metadata"].erase("ownerReferences");
      else updated["metadata"]["ownerReferences"] = kept;
      store_.put(type_key, std::move(updated));
    } else {
      remove_cascading(*dep, dep_ns, dep_name, false);
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
  bool force = false;  // gracePeriodSeconds=0
};

DeleteOptions delete_options(const HttpRequest& req) {
  DeleteOptions o;
  o.propagation = param(req, "propagationPolicy");
  o.force = param(req, "gracePeriodSeconds") == "0";
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
    if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"] == 0) o.force = true;
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
  json removed = *remove_cascading(*t.rt, t.ns, t.name, opts.propagation == "Orphan", opts.force);
  if (t.rt->namespaced && controllers_own(*t.rt)) dirty_namespaces_.insert(t.ns);
  // Objects deleted gracefully (pods, namespaces) and custom resources come back as the object; others as Status.
  if (t.rt->kind == "Pod" || t.rt->kind == "Namespace" || t.rt->custom) {
    if (!removed["metadata"].contains("deletionTimestamp")) removed["metadata"]["deletionTimestamp"] = now_rfc3339();
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
  for (const auto& obj : list["items"]) {
    remove_cascading(*t.rt, meta_string(obj, "namespace"), meta_string(obj, "name"), opts.propagation == "Orphan",
                     opts.force);
    if (t.rt->namespaced && controllers_own(*t.rt)) dirty_namespaces_.insert(meta_string(obj, "namespace"));
  }
  list["metadata"].erase("continue");
  list["metadata"]["resourceVersion"] = std::to_string(store_.revision());
  return json_response(200, list);
}

// ---------------------------------------------------------------------------------------------------------------
// watch

HttpResponse ApiServer::watch_objects(const HttpRequest& req, const Target& t) {
  WatchSpec spec;
  spec.type_key = t.rt->key();
  spec.kind = t.rt->kind;
  spec.api_version = t.rt->api_version();
  spec.ns = t.ns;
  // A watch on one object's path (the old form) is a watch of its collection narrowed to that name.
  std::string field_text = param(req, "fieldSelector");
  if (!t.name.empty()) field_text += (field_text.empty() ? "" : ",") + std::string("metadata.name=") + t.name;
  try {
    spec.labels = LabelSelector::parse(param(req, "labelSelector"));
    spec.fields = FieldSelector::parse(field_text, t.rt->kind);
  } catch (const SelectorError& e) {
    throw bad_request(e.what());
  }
  const std::string bookmarks = param(req, "allowWatchBookmarks");
  spec.bookmarks = bookmarks == "true" || bookmarks == "1";
  spec.as_table = wants_table(req);

  // timeoutSeconds; absent or 0: kube-apiserver's randomised minRequestTimeout*(1+rand).
  std::chrono::milliseconds timeout{0};
  if (const std::string ts = param(req, "timeoutSeconds"); !ts.empty()) {
    if (ts.find_first_not_of("0123456789") != std::string::npos || ts.size() > 9)
      throw bad_request("timeoutSeconds: invalid value \"" + ts + "\"");
    timeout = std::chrono::seconds(std::stoll(ts));
  }
  if (timeout.count() == 0) {
    std::uniform_real_distribution<double> factor(1.0, 2.0);
    timeout = std::chrono::milliseconds(
        static_cast<long long>(std::chrono::milliseconds(options_.min_request_timeout).count() * factor(rng())));
  }

  // ValidateListOptions' rules for sendInitialEvents (the WatchList streaming of the initial state).
  const std::string rv = param(req, "resourceVersion");
  const std::string match = param(req, "resourceVersionMatch");
  const std::string send_initial = param(req, "sendInitialEvents");
  const ErrorTarget list_options{"meta.k8s.io", "", "ListOptions", ""};
  if (!send_initial.empty()) {
    if (send_initial != "true" && send_initial != "false")
      throw bad_request("sendInitialEvents: invalid value \"" + send_initial + "\"");
    if (!spec.bookmarks)
      throw invalid(list_options, {{"FieldValueForbidden", "Forbidden: sendInitialEvents requires setting "
                                                           "allowWatchBookmarks to true", "allowWatchBookmarks"}});
    if (match != "NotOlderThan")
      throw invalid(list_options, {{"FieldValueForbidden", "Forbidden: sendInitialEvents requires setting "
                                                           "resourceVersionMatch to NotOlderThan",
                                    "resourceVersionMatch"}});
  } else if (!match.empty()) {
    throw invalid(list_options, {{"FieldValueForbidden", "Forbidden: resourceVersionMatch is forbidden for watch "
                                                         "unless sendInitialEvents is provided",
                                  "resourceVersionMatch"}});
  }
  std::uint64_t from = 0;
  if (!rv.empty() && rv != "0") {
    if (rv.find_first_not_of("0123456789") != std::string::npos || rv.size() > 19)
      throw bad_request("resourceVersion: Invalid value: \"" + rv + "\": strconv.ParseUint: parsing \"" + rv +
                        "\": invalid syntax");
    from = std::stoull(rv);
  }
  const bool initial = send_initial.empty() ? from == 0 : send_initial == "true";
  const std::uint64_t revision = store_.revision();
  // A watch from a resourceVersion not reached yet starts there: later changes up to it are not its business.
  spec.after_revision = std::max(from, revision);

  const auto start = Watch::Clock::now();
  auto w = std::make_shared<Watch>(std::move(spec), start, start + timeout,
                                   std::chrono::duration_cast<Watch::Clock::duration>(options_.bookmark_interval));
  bool open = true;
  if (initial) {
    // Synthetic ADDED events for the current state ("Get State and Start at Most Recent").
    store_.scan(t.rt->key(), t.ns, {}, [&](const ObjectPtr& p) {
      if (watch_selects(w->spec(), *p)) w->push({WatchEvent::Type::Added, p, ""});
      return true;
    });
    if (send_initial == "true") w->push_initial_events_end(revision);
  } else if (from > 0) {
    auto events = store_.events_since(from);
    if (!events) {
      // Past the history (compacted): still a 200 stream, whose only event is ERROR 410 (the cacher's errWatcher).
      w->fail(ApiError(410, "Expired", "too old resource version: " + rv + " (" +
                                           std::to_string(store_.oldest_watchable()) + ")")
                  .status());
      open = false;
    } else {
      for (const auto& e : *events)
        if (auto we = watch_event_for(e, w->spec())) w->push(std::move(*we));
    }
  }
  w->advance(revision);
  if (stopping_) w->abort();
  if (open && !stopping_) watchers_.push_back(w);
  HttpResponse r;
  r.status = 200;
  r.watch = std::move(w);
  return r;
}

void ApiServer::dispatch() {
  std::erase_if(watchers_, [](const std::shared_ptr<Watch>& w) { return w->done(); });
  for (const auto& e : pending_)
    for (auto& w : watchers_)
      if (e.resource_version > w->spec().after_revision)
        if (auto we = watch_event_for(e, w->spec())) w->push(std::move(*we));
  pending_.clear();
  for (auto& w : watchers_) w->advance(store_.revision());
}

// ---------------------------------------------------------------------------------------------------------------
// control endpoints

HttpResponse ApiServer::control(const HttpRequest& req) {
  if (req.path != "/sandbox/close-watches" && req.path != "/sandbox/compact" && req.path != "/sandbox/pod-state")
    throw resource_not_found();
  if (req.method != "POST") throw method_not_allowed("the sandbox control endpoints take POST");
  if (req.path == "/sandbox/close-watches") {
    int closed = 0;
    for (auto& w : watchers_) {
      if (w->done()) continue;
      w->abort();
      ++closed;
    }
    watchers_.clear();
    return json_response(200, {{"closed", closed}});
  }
  if (req.path == "/sandbox/compact") {
    store_.compact();
    return json_response(200, {{"compactedRevision", std::to_string(store_.revision())}});
  }
  return set_pod_state(req);
}

HttpResponse ApiServer::set_pod_state(const HttpRequest& req) {
  json body;
  try {
    body = json::parse(req.body);
  } catch (const json::exception& e) {
    throw bad_request(std::string("pod-state: the body is not JSON: ") + e.what());
  }
  if (!body.is_object()) throw bad_request("pod-state: the body must be a JSON object");
  for (const auto& [k, v] : body.items())
    if (k != "namespace" && k != "pod" && k != "role" && k != "instance" && k != "state")
      throw bad_request("pod-state: unknown field \"" + k + "\" (namespace, pod, role, instance, state)");
  const auto text = [&](const char* k) {
    if (!body.contains(k)) return std::string();
    if (!body[k].is_string() || body[k].get<std::string>().empty())
      throw bad_request(std::string("pod-state: ") + k + " must be a non-empty string");
    return body[k].get<std::string>();
  };
  const std::string ns = text("namespace"), pod = text("pod"), role = text("role"), state_name = text("state");
  if (ns.empty()) throw bad_request("pod-state: namespace is required");
  const auto state = parse_pod_state(state_name);
  if (!state) throw bad_request("pod-state: state must be one of " + pod_state_names());
  if (pod.empty() == role.empty()) throw bad_request("pod-state: give either pod or role");
  std::optional<int> instance;
  if (body.contains("instance")) {
    if (role.empty()) throw bad_request("pod-state: instance goes with role");
    if (!body["instance"].is_number_integer() || body["instance"].get<long long>() < 0 ||
        body["instance"].get<long long>() > 1000000)
      throw bad_request("pod-state: instance must be an integer >= 0");
    instance = body["instance"].get<int>();
  }

  const ResourceType& pods_t = registry_.by_kind("v1", "Pod");
  std::vector<json> targets;
  if (!pod.empty()) {
    if (const json* p = store_.find(pods_t.key(), ns, pod)) targets.push_back(*p);
    if (targets.empty()) throw not_found(pods_t.target(pod));
  } else {
    static const json no_labels = json::object();
    store_.scan(pods_t.key(), ns, {}, [&](const ObjectPtr& p) {
      const json& meta = (*p)["metadata"];
      const json& labels = meta.contains("labels") && meta["labels"].is_object() ? meta["labels"] : no_labels;
      const std::string r = labels.value(kLabelInstanceSet, labels.value("app.kubernetes.io/component", "")),
                        k = labels.value(kLabelInstanceIndex, labels.value("kubectl-mindie/instance-index", ""));
      if (!r.empty() && (role == "*" || r == role) && (!instance || k == std::to_string(*instance)))
        targets.push_back(*p);
      return true;
    });
    if (targets.empty())
      throw ApiError(404, "NotFound",
                     "no pods of role \"" + role + "\"" +
                         (instance ? " instance " + std::to_string(*instance) : std::string()) + " in namespace \"" +
                         ns + "\"",
                     {{"kind", "pods"}});
  }
  const std::string now = now_rfc3339();
  json names = json::array();
  for (const auto& p : targets) {
    apply_state(p, *state, now);
    names.push_back(meta_string(p, "name"));
  }
  // The controllers see the pods change: every status above them follows.
  if (options_.simulate_operator) {
    dirty_namespaces_.insert(ns);
    reconcile_dirty();
  }
  return json_response(200, {{"pods", names}});
}

json ApiServer::apply_state(const json& pod, PodState state, const std::string& now) {
  const ResourceType& pods_t = registry_.by_kind("v1", "Pod");
  PodTransition t = apply_pod_state(pod, state, now);
  json stored = pod;
  if (t.pod != pod) {
    // kubelet (and the scheduler's binding, the taint manager's deletion) write the pod without a client's checks.
    record_update(pod, t.pod, Writer{"kubelet", "v1", now, "status", OwnershipScope::Status});
    stored = store_.put(pods_t.key(), std::move(t.pod));
  }
  record_pod_events(stored, t.events, now);
  return stored;
}

void ApiServer::record_pod_events(const json& pod, const std::vector<PodEventSpec>& events, const std::string& now) {
  if (events.empty()) return;
  const ResourceType& events_t = registry_.by_kind("v1", "Event");
  const std::string ns = meta_string(pod, "namespace"), uid = meta_string(pod, "uid");
  const std::string micro = now_rfc3339_micro();
  for (const auto& e : events) {
    // The event correlator folds an identical event into the earlier one (count, or series for events.k8s.io).
    const std::string key = ns + "\n" + uid + "\n" + e.component + "\n" + e.type + "\n" + e.reason + "\n" +
                            e.field_path + "\n" + e.message;
    WriteContext ctx(e.component);
    ctx.internal = true;
    try {
      if (auto it = event_index_.find(key); it != event_index_.end()) {
        if (const json* existing = store_.find(events_t.key(), ns, it->second)) {
          const json old = *existing;
          commit(events_t, old, repeat_pod_event(old, now, micro), ctx);
          continue;
        }
      }
      const auto nanos = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count());
      const json stored = commit(events_t, std::nullopt, make_pod_event(pod, e, now, micro, nanos + ++event_serial_),
                                 ctx);
      event_index_[key] = meta_string(stored, "name");
    } catch (const ApiError&) {
      // An event the API rejects is lost, as a recorder drops it.
    }
  }
}

PodStateRule parse_pod_state_rule(const std::string& spec) {
  const auto eq = spec.rfind('=');
  if (eq == std::string::npos) throw std::invalid_argument("expected ROLE[:INSTANCE]=STATE, got " + spec);
  PodStateRule rule;
  const auto state = parse_pod_state(spec.substr(eq + 1));
  if (!state) throw std::invalid_argument("unknown STATE in " + spec + " (one of " + pod_state_names() + ")");
  rule.state = *state;
  const std::string lhs = spec.substr(0, eq);
  const auto colon = lhs.find(':');
  rule.role = lhs.substr(0, colon);
  if (rule.role.empty()) throw std::invalid_argument("missing ROLE in " + spec + " (use * for every role)");
  if (colon != std::string::npos) {
    const std::string k = lhs.substr(colon + 1);
    if (k.empty() || k.size() > 6 || k.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("INSTANCE must be a number in " + spec);
    rule.instance = std::stoi(k);
  }
  return rule;
}

// ---------------------------------------------------------------------------------------------------------------
// the infer-operator simulation and the workload controllers below it

std::vector<ObjectPtr> ApiServer::owned(const ResourceType& rt, const json& owner) const {
  std::vector<ObjectPtr> out;
  for (const auto& [type_key, ns, name] : store_.dependents(meta_string(owner, "uid")))
    if (type_key == rt.key())
      if (ObjectPtr o = store_.find_ptr(type_key, ns, name)) out.push_back(std::move(o));
  return out;
}

json ApiServer::ensure(const ResourceType& rt, json desired, bool update, const std::string& manager) {
  const std::string ns = meta_string(desired, "namespace"), name = meta_string(desired, "name");
  WriteContext ctx(manager);
  ctx.internal = true;
  try {
    const json* current = store_.find(rt.key(), ns, name);
    if (!current) return commit(rt, std::nullopt, std::move(desired), ctx);
    if (!update) return *current;
    json updated = *current;
    updated["spec"] = desired["spec"];
    // infer-operator copies only the spec into an existing InstanceSet: its labels and annotations stay as they
    // were created (infer-operator-rules.md D3).
    if (rt.kind != "InstanceSet") updated["metadata"]["labels"] = desired["metadata"]["labels"];
    if (updated == *current) return *current;
    const json old = *current;
    return commit(rt, old, std::move(updated), ctx);
  } catch (const ApiError&) {
    // The API refused it (a name too long, say); the real controllers only log this.
    const json* current = store_.find(rt.key(), ns, name);
    return current ? *current : json();
  }
}

json ApiServer::write_status(const ResourceType& rt, const json& current, json status, const std::string& manager) {
  if (current.contains("status") && current["status"] == status) return current;
  json updated = current;
  updated["status"] = std::move(status);
  WriteContext ctx(manager, "status");
  ctx.internal = true;
  try {
    return commit(rt, current, std::move(updated), ctx);
  } catch (const ApiError&) {
    return current;  // a status the schema rejects stays unwritten
  }
}

json ApiServer::create_pod(const json& pod_owner, const std::string& name, bool ready, const std::string& now) {
  const ResourceType& pods_t = registry_.by_kind("v1", "Pod");
  json pod = pod_for(pod_owner, name, ready, now);
  const json labels = pod["metadata"].value("labels", json::object());
  // Operator pods carry the infer.huawei.com/ labels; a client's own Deployments (multi_deployment) the
  // component and instance-index labels kubectl-mindie puts on them.
  const std::string role = labels.value(kLabelInstanceSet, labels.value("app.kubernetes.io/component", "")),
                    index = labels.value(kLabelInstanceIndex, labels.value("kubectl-mindie/instance-index", ""));
  const PodStateRule* rule = nullptr;
  for (const auto& r : options_.pod_states)
    if ((r.role == "*" || r.role == role) && (!r.instance || std::to_string(*r.instance) == index)) rule = &r;
  // A --pod-state rule: the pod is created in that state (watchers never see it Running first).
  std::vector<PodEventSpec> events;
  if (rule && rule->state != PodState::Terminating) {
    PodTransition t = apply_pod_state(pod, rule->state, now);
    pod = std::move(t.pod);
    events = std::move(t.events);
  }
  WriteContext ctx("kube-controller-manager");
  ctx.internal = true;
  json stored;
  try {
    stored = commit(pods_t, std::nullopt, std::move(pod), ctx);
  } catch (const ApiError&) {
    return json();  // a pod the API rejects (a template label that is no label, say) is not created
  }
  if (rule && rule->state == PodState::Terminating) return apply_state(stored, PodState::Terminating, now);
  record_pod_events(stored, events, now);
  return stored;
}

void ApiServer::reconcile_dirty() {
  if (!options_.simulate_operator || dirty_namespaces_.empty()) return;
  const std::set<std::string> dirty = std::move(dirty_namespaces_);
  dirty_namespaces_.clear();
  // AIBrix (aibrix_sim.cpp): StormServices recreate the pods clients deleted, as the InferServiceSets below.
  if (const ResourceType* ss_t = registry_.find("orchestration.aibrix.ai", "v1alpha1", "stormservices"))
    for (const auto& ns : dirty)
      for (const auto& ss : store_.list(ss_t->key(), ns)) reconcile_storm_service(ss);
  // Deployments a client wrote itself (multi_deployment): the deployment controller recreates their pods.
  const ResourceType& deploy_t = registry_.by_kind("apps/v1", "Deployment");
  for (const auto& ns : dirty)
    for (const auto& d : store_.list(deploy_t.key(), ns))
      if (!d["metadata"].contains("ownerReferences") && !d["metadata"].contains("deletionTimestamp"))
        reconcile_workload(d, now_rfc3339());
  const ResourceType* iss_t = registry_.find("mindcluster.huawei.com", "v1", "inferservicesets");
  if (!iss_t) return;
  for (const auto& ns : dirty)
    for (const auto& iss : store_.list(iss_t->key(), ns)) reconcile_infer_service_set(iss);
}

void ApiServer::reconcile_infer_service_set(const json& given) {
  const ResourceType& iss_t = registry_.by_kind("mindcluster.huawei.com/v1", "InferServiceSet");
  const ResourceType& is_t = registry_.by_kind("mindcluster.huawei.com/v1", "InferService");
  const std::string ns = meta_string(given, "namespace"), name = meta_string(given, "name");
  const json* current = store_.find(iss_t.key(), ns, name);
  if (!current || (*current)["metadata"].contains("deletionTimestamp")) return;
  const json iss = *current;
  // A set the operator refuses only reaches its log: nothing changes.
  if (!infer_service_set_valid(iss)) return;
  const std::string now = now_rfc3339();
  const int services = iss["spec"].value("replicas", 1);
  for (const auto& is : owned(is_t, iss)) {
    const std::string index = (*is)["metadata"].value("labels", json::object()).value(kLabelInferServiceIndex, "");
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 4 ||
        std::stoi(index) >= services)
      remove_cascading(is_t, ns, meta_string(*is, "name"), false);
  }
  std::vector<json> infer_services;
  for (int i = 0; i < services; ++i) {
    const json is = ensure(is_t, infer_service_for(iss, i), true, "infer-operator");
    if (!is.is_null()) infer_services.push_back(reconcile_infer_service(is, name, now));
  }
  write_status(iss_t, iss, infer_service_set_status(iss, infer_services, iss.value("status", json::object()), now),
               "infer-operator");
}

json ApiServer::reconcile_infer_service(const json& is, const std::string& set_name, const std::string& now) {
  const ResourceType& is_t = registry_.by_kind("mindcluster.huawei.com/v1", "InferService");
  const ResourceType& ist_t = registry_.by_kind("mindcluster.huawei.com/v1", "InstanceSet");
  const std::string ns = meta_string(is, "namespace");
  const json roles = is["spec"].value("roles", json::array());
  std::set<std::string> names;
  for (const auto& r : roles)
    if (r.is_object() && r.value("name", json()).is_string()) names.insert(r["name"].get<std::string>());
  // Roles are reconciled by name: a removed role's InstanceSet goes, with everything under it.
  for (const auto& ist : owned(ist_t, is))
    if (!names.count((*ist)["metadata"].value("labels", json::object()).value(kLabelInstanceSet, "")))
      remove_cascading(ist_t, ns, meta_string(*ist, "name"), false);
  std::vector<json> sets;
  for (const auto& role : roles) {
    if (!role.is_object()) continue;
    json desired = instance_set_for(is, role);
    // An HPA owns an HPA-scaled role's replicas: what the role says after creation no longer counts.
    if (hpa_scaled(role))
      if (const json* existing = store_.find(ist_t.key(), ns, meta_string(desired, "name")))
        desired["spec"]["replicas"] = (*existing)["spec"].value("replicas", json(1));
    const json ist = ensure(ist_t, std::move(desired), true, "infer-operator");
    if (!ist.is_null()) sets.push_back(reconcile_instance_set(ist, set_name, now));
  }
  return write_status(is_t, is, infer_service_status(is, sets, is.value("status", json::object()), now),
                      "infer-operator");
}

json ApiServer::reconcile_instance_set(const json& ist, const std::string& set_name, const std::string& now) {
  const ResourceType& ist_t = registry_.by_kind("mindcluster.huawei.com/v1", "InstanceSet");
  const ResourceType& deploy_t = registry_.by_kind("apps/v1", "Deployment");
  const ResourceType& sts_t = registry_.by_kind("apps/v1", "StatefulSet");
  const ResourceType& svc_t = registry_.by_kind("v1", "Service");
  const ResourceType* pg_t = registry_.find("scheduling.volcano.sh", "v1beta1", "podgroups");
  const std::string ns = meta_string(ist, "namespace");
  // The operator's validation (instanceset_controller.go validate): a refusal is a ValidateError event and nothing
  // else is reconciled for the role, not even its status (infer-operator-rules.md A1, A3).
  if (const std::string refused = instance_set_refusal(ist, pg_t != nullptr); !refused.empty()) {
    record_pod_events(ist, {{"Warning", "ValidateError", refused, "infer-operator", ""}}, now);
    return ist;
  }
  const json& replicas = ist["spec"].value("replicas", json(1));
  const int desired = replicas.is_number_integer() ? std::clamp(replicas.get<int>(), 0, 4096) : 0;
  const std::string kind = workload_for(ist, 0, set_name).value("kind", "Deployment");
  // Scale in: workloads with index >= replicas go with their pods (and those of another kind, which the operator
  // would not have made).
  for (const ResourceType* wt : {&deploy_t, &sts_t})
    for (const auto& w : owned(*wt, ist)) {
      const std::string index = (*w)["metadata"].value("labels", json::object()).value(kLabelInstanceIndex, "");
      if (wt->kind != kind || index.empty() || index.find_first_not_of("0123456789") != std::string::npos ||
          index.size() > 5 || std::stoi(index) >= desired)
        remove_cascading(*wt, ns, meta_string(*w, "name"), false);
    }
  // The role Services come before any workload, and the first one the API refuses stops the InstanceSet there
  // (instanceset_controller.go reconcileWorkLoads; infer-operator-rules.md A2).
  const json services = ist["spec"].value("services", json::array());
  if (services.is_array())
    for (const auto& entry : services) {
      if (!entry.is_object() || !entry.value("name", json()).is_string()) continue;
      const json svc = role_service_for(ist, entry, infer_service_index(ist, set_name));
      if (store_.find(svc_t.key(), ns, meta_string(svc, "name"))) continue;  // never updated
      WriteContext ctx("infer-operator");
      ctx.internal = true;
      try {
        commit(svc_t, std::nullopt, svc, ctx);
      } catch (const ApiError& e) {
        record_pod_events(ist, {{"Warning", "ServiceCreateError",
                                 "create service " + meta_string(svc, "name") + " failed: " + e.what(),
                                 "infer-operator", ""}},
                          now);
        return ist;
      }
    }
  // Without the strategy label a current operator creates no workloads, and writes no status (D4).
  const json ist_labels = ist["metadata"].value("labels", json::object());
  if (!ist_labels.contains(kLabelPriorityStrategy)) return ist;
  // Missing instances are created from the current spec; existing workloads are never updated. A gang role's
  // instance gets its PodGroup first, which stays when the instance is removed and is reused as it is (D1).
  const bool gang = ist_labels.value(kLabelGangSchedule, "") == "true";
  std::vector<json> workloads;
  const ResourceType& wt = kind == "StatefulSet" ? sts_t : deploy_t;
  for (int k = 0; k < desired; ++k) {
    if (gang && pg_t) ensure(*pg_t, pod_group_for(ist, k), false, "infer-operator");
    const json w = ensure(wt, workload_for(ist, k, set_name), false, "infer-operator");
    if (w.is_null()) continue;
    if (kind == "StatefulSet") ensure(svc_t, headless_service_for(w, w), false, "infer-operator");
    workloads.push_back(reconcile_workload(w, now));
  }
  return write_status(ist_t, ist, instance_set_status(ist, workloads, ist.value("status", json::object()), now),
                      "infer-operator");
}

json ApiServer::reconcile_workload(const json& workload, const std::string& now) {
  const ResourceType& pods_t = registry_.by_kind("v1", "Pod");
  const std::string ns = meta_string(workload, "namespace"), name = meta_string(workload, "name");
  const int replicas = workload["spec"].value("replicas", 1);
  const json wlabels = workload["metadata"].value("labels", json::object());
  // A client's own Deployment (multi_deployment) names its role in the app.kubernetes.io/component label.
  const std::string role = wlabels.value(kLabelInstanceSet, wlabels.value("app.kubernetes.io/component", ""));
  const bool pair = master_standby(role, replicas);
  const auto active_of = [&](const json& owner) {
    std::vector<ObjectPtr> active;
    for (auto& p : owned(pods_t, owner))
      if (!(*p)["metadata"].contains("deletionTimestamp")) active.push_back(std::move(p));
    return active;
  };
  const auto any_ready = [](const std::vector<ObjectPtr>& pods) {
    return std::any_of(pods.begin(), pods.end(), [](const ObjectPtr& p) { return pod_ready(*p); });
  };
  if (workload.value("kind", "") == "Deployment") {
    const ResourceType& deploy_t = registry_.by_kind("apps/v1", "Deployment");
    const ResourceType& rs_t = registry_.by_kind("apps/v1", "ReplicaSet");
    // The ReplicaSet of the current pod template, its replicas following the Deployment's.
    const json rs = ensure(rs_t, replica_set_for(workload), true, "kube-controller-manager");
    if (rs.is_null()) return workload;
    const std::string rs_name = meta_string(rs, "name");
    // A finished rollout leaves the ReplicaSets of earlier templates at 0 replicas (kept for rollback), their pods
    // gone: the deployment controller's end state, without its step-by-step surge.
    for (const auto& old : owned(rs_t, workload)) {
      if (meta_string(*old, "name") == rs_name) continue;
      for (const auto& p : active_of(*old)) remove_cascading(pods_t, ns, meta_string(*p, "name"), false);
      json scaled = *old;
      scaled["spec"]["replicas"] = 0;
      const json updated = ensure(rs_t, std::move(scaled), true, "kube-controller-manager");
      if (!updated.is_null()) write_status(rs_t, updated, replica_set_status(updated, active_of(updated)),
                                           "kube-controller-manager");
    }
    // The ReplicaSet keeps `replicas` active pods: a terminating one (stuck on a dead node) gets a replacement, and
    // a scale-in removes the surplus (the last by name; the real controller prefers unready and newer pods).
    std::vector<ObjectPtr> active = active_of(rs);
    std::sort(active.begin(), active.end(),
              [](const ObjectPtr& a, const ObjectPtr& b) { return meta_string(*a, "name") < meta_string(*b, "name"); });
    while (static_cast<int>(active.size()) > replicas) {
      remove_cascading(pods_t, ns, meta_string(*active.back(), "name"), false);
      active.pop_back();
    }
    bool have_ready = any_ready(active);
    for (int seed = 0, missing = replicas - static_cast<int>(active.size()); missing > 0 && seed < replicas + 10000;
         ++seed) {
      const std::string pod_name = replica_set_pod_name(rs_name, seed);
      if (store_.find(pods_t.key(), ns, pod_name)) continue;
      const json pod = create_pod(rs, pod_name, !(pair && have_ready), now);
      if (pod.is_null()) break;
      have_ready = have_ready || pod_ready(pod);
      --missing;
    }
    active = active_of(rs);
    write_status(rs_t, rs, replica_set_status(rs, active), "kube-controller-manager");
    return write_status(deploy_t, workload,
                        deployment_status(workload, active, rs_name, workload.value("status", json::object()), now),
                        "kube-controller-manager");
  }
  // StatefulSet: ordinals 0..replicas-1; a terminating pod keeps its ordinal until it is gone.
  const ResourceType& sts_t = registry_.by_kind("apps/v1", "StatefulSet");
  bool have_ready = any_ready(active_of(workload));
  for (int ordinal = 0; ordinal < replicas; ++ordinal) {
    const std::string pod_name = name + "-" + std::to_string(ordinal);
    if (store_.find(pods_t.key(), ns, pod_name)) continue;
    const json pod = create_pod(workload, pod_name, !(pair && have_ready), now);
    have_ready = have_ready || (!pod.is_null() && pod_ready(pod));
  }
  return write_status(sts_t, workload, stateful_set_status(workload, owned(pods_t, workload)),
                      "kube-controller-manager");
}

}  // namespace mindie::sandbox
