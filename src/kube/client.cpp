#include "kube/client.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <memory>

namespace mindie::kube {

// ---------------------------------------------------------------------------------------------------------------
// GVR

std::string GVR::api_version() const { return group.empty() ? version : group + "/" + version; }

std::string GVR::kind_dot_group() const {
  std::string out;
  out.reserve(kind.size() + 1 + group.size());
  for (char c : kind) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!group.empty()) out += "." + group;
  return out;
}

namespace gvr {
const GVR kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
const GVR kServiceAccounts{"", "v1", "serviceaccounts", "ServiceAccount", true};
const GVR kServices{"", "v1", "services", "Service", true};
const GVR kPods{"", "v1", "pods", "Pod", true};
const GVR kNamespaces{"", "v1", "namespaces", "Namespace", false};
const GVR kNodes{"", "v1", "nodes", "Node", false};
const GVR kDeployments{"apps", "v1", "deployments", "Deployment", true};
const GVR kStatefulSets{"apps", "v1", "statefulsets", "StatefulSet", true};
const GVR kClusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false};
const GVR kClusterRoleBindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false};
const GVR kRoles{"rbac.authorization.k8s.io", "v1", "roles", "Role", true};
const GVR kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true};
const GVR kInferServiceSets{"mindcluster.huawei.com", "v1", "inferservicesets", "InferServiceSet", true};
const GVR kInferServices{"mindcluster.huawei.com", "v1", "inferservices", "InferService", true};
const GVR kInstanceSets{"mindcluster.huawei.com", "v1", "instancesets", "InstanceSet", true};
const GVR kEvents{"", "v1", "events", "Event", true};
const GVR kPodGroups{"scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", true};

const GVR* for_kind(std::string_view api_version, std::string_view kind) {
  static const std::array<const GVR*, 17> known{
      &kConfigMaps,       &kServiceAccounts, &kServices,     &kPods,         &kNamespaces,   &kNodes,
      &kDeployments,      &kStatefulSets,    &kRoles,        &kRoleBindings, &kClusterRoles, &kClusterRoleBindings,
      &kInferServiceSets, &kInferServices,   &kInstanceSets, &kEvents,       &kPodGroups};
  for (const GVR* r : known)
    if (r->kind == kind && r->api_version() == api_version) return r;
  return nullptr;
}
}  // namespace gvr

// ---------------------------------------------------------------------------------------------------------------
// ApiError

namespace {

std::string render_api_error(int code, const std::string& reason, const std::string& message,
                             const std::vector<StatusCause>& causes, const std::string& method, const std::string& path,
                             int attempts) {
  std::string out = "Error from server (" + reason + "): " + message;
  for (const auto& c : causes) out += "\n* " + (c.field.empty() ? c.message : c.field + ": " + c.message);
  // The query (fieldManager, dryRun, ...) is noise here; the path names the resource.
  out += "\n(HTTP " + std::to_string(code) + ", " + method + " " + path.substr(0, path.find('?'));
  if (attempts > 1) out += ", gave up after " + std::to_string(attempts) + " attempts";
  out += ")";
  return out;
}

// The reason the API server would have given for `code` (its Status reasons), for error bodies that carry none.
std::string reason_for_code(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "Unknown";
  }
}

// Server text goes to a terminal line by line: control characters (NUL would also cut what() short, ESC could
// drive the terminal, CR/LF would break the one-line-per-problem layout) become spaces.
std::string printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

std::string string_member(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

ApiError decode_api_error(const HttpRequest& req, const HttpResponse& resp) {
  int retry_after = 0;
  if (const std::string h = resp.header("retry-after"); !h.empty()) {
    std::int64_t seconds = 0;
    // An HTTP-date form, or a number with trailing junk, stays 0.
    if (const auto [end, ec] = std::from_chars(h.data(), h.data() + h.size(), seconds);
        ec == std::errc() && end == h.data() + h.size()) {
      retry_after = static_cast<int>(std::clamp<std::int64_t>(seconds, 0, 86400));
    }
  }
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(resp.body, ec);
  const boost::json::object* status = !ec && body.is_object() ? &body.get_object() : nullptr;
  if (status != nullptr && string_member(*status, "kind") == "Status") {
    std::string reason = printable(string_member(*status, "reason"));
    if (reason.empty()) reason = reason_for_code(resp.status);
    std::string message = printable(string_member(*status, "message"));
    if (message.empty()) message = "the server answered HTTP " + std::to_string(resp.status);
    std::vector<StatusCause> causes;
    if (const auto* details = status->if_contains("details"); details != nullptr && details->is_object()) {
      const auto& d = details->get_object();
      if (const auto* list = d.if_contains("causes"); list != nullptr && list->is_array()) {
        for (const auto& c : list->get_array()) {
          if (!c.is_object()) continue;
          const auto& co = c.get_object();
          causes.push_back({printable(string_member(co, "reason")), printable(string_member(co, "message")),
                            printable(string_member(co, "field"))});
        }
      }
      if (const auto* ra = d.if_contains("retryAfterSeconds"); ra != nullptr && ra->is_int64() && retry_after == 0) {
        retry_after = static_cast<int>(std::clamp<std::int64_t>(ra->get_int64(), 0, 86400));
      }
    }
    return ApiError(resp.status, std::move(reason), std::move(message), std::move(causes), req.method, req.path,
                    retry_after, resp.attempts);
  }
  std::string message = printable(resp.body.substr(0, 200));
  if (message.empty()) message = "the server answered HTTP " + std::to_string(resp.status) + " with an empty body";
  return ApiError(resp.status, reason_for_code(resp.status), std::move(message), {}, req.method, req.path, retry_after,
                  resp.attempts);
}

namespace {

// Builds "?a=1&b=2" with escaped values.
class Query {
 public:
  void add(std::string_view key, std::string_view value) {
    out_ += out_.empty() ? '?' : '&';
    out_.append(key);
    out_ += '=';
    out_ += url_encode(value);
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

// metadata.name and metadata.namespace of an object to write; `need_name` for apply, which addresses the object.
std::pair<std::string, std::string> name_and_namespace(const GVR& r, const boost::json::object& obj, bool need_name) {
  std::string name, ns;
  if (const auto* md = obj.if_contains("metadata"); md != nullptr && md->is_object()) {
    name = string_member(md->get_object(), "name");
    ns = string_member(md->get_object(), "namespace");
  }
  if (need_name && name.empty()) throw std::invalid_argument(r.kind + " object has no metadata.name");
  if (r.namespaced && ns.empty()) throw std::invalid_argument(r.kind + " object has no metadata.namespace");
  return {name, ns};
}

}  // namespace

ApiError::ApiError(int code, std::string reason, std::string message, std::vector<StatusCause> causes,
                   std::string method, std::string path, int retry_after_seconds, int attempts)
    : std::runtime_error(render_api_error(code, reason, message, causes, method, path, attempts)),
      code_(code),
      reason_(std::move(reason)),
      message_(std::move(message)),
      causes_(std::move(causes)),
      method_(std::move(method)),
      path_(std::move(path)),
      retry_after_(std::max(0, retry_after_seconds)),
      attempts_(std::max(1, attempts)) {}

std::string ApiError::render() const { return what(); }

// ---------------------------------------------------------------------------------------------------------------
// Client

std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

Client::Client(HttpTransport& transport) : transport_(transport) {}

std::string Client::path(const GVR& r, std::string_view ns, std::string_view name) {
  std::string p = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  // An empty namespace for a namespaced resource addresses the all-namespaces collection, as in the API.
  if (r.namespaced && !ns.empty()) p += "/namespaces/" + url_encode(ns);
  p += "/" + r.resource;
  if (!name.empty()) p += "/" + url_encode(name);
  return p;
}

boost::json::object Client::send_json(HttpRequest req, boost::json::storage_ptr storage) {
  ++requests_;
  const HttpResponse resp = transport_.send(req);
  if (resp.status < 200 || resp.status > 299) throw decode_api_error(req, resp);
  boost::system::error_code ec;
  boost::json::value body = boost::json::parse(resp.body, ec, std::move(storage));
  if (ec || !body.is_object()) {
    throw std::runtime_error(req.method + " " + req.path + ": the server answered " + std::to_string(resp.status) +
                             " with a body that is not a JSON object");
  }
  return std::move(body.get_object());
}

boost::json::object Client::get(const GVR& r, std::string_view ns, std::string_view name) {
  HttpRequest req;
  req.method = "GET";
  req.path = path(r, ns, name);
  return send_json(std::move(req));
}

std::optional<boost::json::object> Client::get_if_exists(const GVR& r, std::string_view ns, std::string_view name) {
  try {
    return get(r, ns, name);
  } catch (const ApiError& e) {
    if (e.is_not_found()) return std::nullopt;
    throw;
  }
}

void Client::page_through(const GVR& r, std::string_view ns, std::string_view label_selector, int limit,
                          std::string_view field_selector,
                          const std::function<boost::json::storage_ptr()>& storage_for_page,
                          const std::function<void(boost::json::object& page)>& on_page) {
  const std::string base = path(r, ns);
  std::string token;
  while (true) {
    // Every page repeats the same parameters; only `continue` changes (API concepts, "Retrieving large results").
    Query q;
    if (!label_selector.empty()) q.add("labelSelector", label_selector);
    if (!field_selector.empty()) q.add("fieldSelector", field_selector);
    if (limit > 0) q.add("limit", std::to_string(limit));
    if (!token.empty()) q.add("continue", token);
    HttpRequest req;
    req.method = "GET";
    req.path = base + q.str();
    boost::json::object page = send_json(std::move(req), storage_for_page());
    if (const auto* items = page.if_contains("items"); items != nullptr && !items->is_null() && !items->is_array())
      throw std::runtime_error("GET " + base + ": the list's \"items\" is not an array");
    std::string next;
    if (const auto* md = page.if_contains("metadata"); md != nullptr && md->is_object()) {
      next = string_member(md->get_object(), "continue");
    }
    on_page(page);
    if (next.empty()) break;
    // A server handing back the token it was given would otherwise keep us paging forever.
    if (next == token) throw std::runtime_error("GET " + base + ": the server repeated continue token " + token);
    token = std::move(next);
  }
}

boost::json::object Client::list(const GVR& r, std::string_view ns, std::string_view label_selector, int limit,
                                 std::string_view field_selector) {
  // Lists can hold thousands of objects: one arena for every page makes building and freeing them cheap (a
  // monotonic resource frees nothing until the last value using it goes, and lets destructors skip the walk),
  // and moving items between pages of the same arena copies nothing.
  const boost::json::storage_ptr arena = boost::json::make_shared_resource<boost::json::monotonic_resource>();
  boost::json::array items(arena);
  boost::json::object last(arena);
  page_through(
      r, ns, label_selector, limit, field_selector, [&] { return arena; },
      [&](boost::json::object& page) {
        if (auto* page_items = page.if_contains("items"); page_items != nullptr && page_items->is_array())
          for (auto& item : page_items->get_array()) items.push_back(std::move(item));
        last = std::move(page);
      });
  last["items"] = std::move(items);
  return last;
}

boost::json::object Client::list_each(const GVR& r, std::string_view ns, std::string_view label_selector, int limit,
                                      std::string_view field_selector,
                                      const std::function<void(boost::json::object& item)>& on_item) {
  // One buffer serves every page: after the first page no fresh memory is touched (no page faults), and nothing
  // is freed item by item. A page larger than the buffer spills over to the heap, released with the page.
  constexpr std::size_t kPageBuffer = 8 << 20;
  const auto buffer = std::make_unique<unsigned char[]>(kPageBuffer);
  std::optional<boost::json::monotonic_resource> arena;
  boost::json::object metadata;
  page_through(
      r, ns, label_selector, limit, field_selector,
      [&]() -> boost::json::storage_ptr {
        arena.emplace(buffer.get(), kPageBuffer);
        return boost::json::storage_ptr(&*arena);
      },
      [&](boost::json::object& page) {
        if (auto* items = page.if_contains("items"); items != nullptr && items->is_array())
          for (auto& item : items->get_array())
            if (item.is_object()) on_item(item.get_object());
        if (const auto* md = page.if_contains("metadata"); md != nullptr && md->is_object())
          metadata = boost::json::object(md->get_object(), boost::json::storage_ptr());
      });
  return metadata;
}

boost::json::object Client::apply(const GVR& r, const boost::json::object& obj, const WriteOptions& opts) {
  const auto [name, ns] = name_and_namespace(r, obj, true);
  Query q;
  q.add("fieldManager", opts.field_manager);
  if (opts.force) q.add("force", "true");
  if (opts.dry_run) q.add("dryRun", "All");
  HttpRequest req;
  req.method = "PATCH";
  req.path = path(r, ns, name) + q.str();
  req.content_type = "application/apply-patch+yaml";  // JSON is YAML: the server accepts the object as is
  req.body = boost::json::serialize(obj);
  return send_json(std::move(req));
}

boost::json::object Client::patch(const GVR& r, std::string_view ns, std::string_view name, PatchType type,
                                  const boost::json::value& patch, const WriteOptions& opts) {
  Query q;
  q.add("fieldManager", opts.field_manager);
  if (opts.dry_run) q.add("dryRun", "All");
  HttpRequest req;
  req.method = "PATCH";
  req.path = path(r, ns, name) + q.str();
  req.content_type = type == PatchType::Json ? "application/json-patch+json" : "application/merge-patch+json";
  req.body = boost::json::serialize(patch);
  return send_json(std::move(req));
}

boost::json::object Client::create(const GVR& r, const boost::json::object& obj, const WriteOptions& opts) {
  const auto [name, ns] = name_and_namespace(r, obj, false);
  Query q;
  q.add("fieldManager", opts.field_manager);
  if (opts.dry_run) q.add("dryRun", "All");
  HttpRequest req;
  req.method = "POST";
  req.path = path(r, ns) + q.str();
  req.content_type = "application/json";
  req.body = boost::json::serialize(obj);
  return send_json(std::move(req));
}

void Client::remove(const GVR& r, std::string_view ns, std::string_view name, const WriteOptions& opts) {
  Query q;
  if (opts.dry_run) q.add("dryRun", "All");
  HttpRequest req;
  req.method = "DELETE";
  req.path = path(r, ns, name) + q.str();
  send_json(std::move(req));
}

void Client::remove_if_unchanged(const GVR& r, std::string_view ns, std::string_view name,
                                 std::string_view resource_version, const WriteOptions& opts) {
  Query q;
  if (opts.dry_run) q.add("dryRun", "All");
  HttpRequest req;
  req.method = "DELETE";
  req.path = path(r, ns, name) + q.str();
  req.content_type = "application/json";
  req.body = boost::json::serialize(
      boost::json::object{{"kind", "DeleteOptions"},
                          {"apiVersion", "v1"},
                          {"preconditions", {{"resourceVersion", std::string(resource_version)}}}});
  send_json(std::move(req));
}

std::string resource_version_of(const boost::json::object& obj, const std::string& what) {
  const auto* md = obj.if_contains("metadata");
  const auto* rv = md != nullptr && md->is_object() ? md->get_object().if_contains("resourceVersion") : nullptr;
  if (rv == nullptr || !rv->is_string() || rv->get_string().empty())
    throw std::runtime_error("the server's answer for " + what +
                             " has no metadata.resourceVersion, which every "
                             "stored object has; nothing was written");
  return std::string(rv->get_string());
}

void Client::remove_exact(const GVR& r, std::string_view ns, std::string_view name, std::string_view uid,
                          std::string_view resource_version, const WriteOptions& opts) {
  Query q;
  if (opts.dry_run) q.add("dryRun", "All");
  boost::json::object preconditions{{"uid", std::string(uid)}};
  if (!resource_version.empty()) preconditions["resourceVersion"] = std::string(resource_version);
  boost::json::object body{{"kind", "DeleteOptions"},
                           {"apiVersion", "v1"},
                           {"preconditions", std::move(preconditions)}};
  // With a body, kube-apiserver decodes DeleteOptions from it and ignores the query's (kubernetes/kubernetes
  // staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go, DeleteResource): dryRun goes in both.
  if (opts.dry_run) body["dryRun"] = boost::json::array{"All"};
  HttpRequest req;
  req.method = "DELETE";
  req.path = path(r, ns, name) + q.str();
  req.content_type = "application/json";
  req.body = boost::json::serialize(body);
  send_json(std::move(req));
}

bool Client::has_group_version(std::string_view group, std::string_view version) {
  HttpRequest req;
  req.method = "GET";
  req.path = group.empty() ? "/api/" + std::string(version)
                           : "/apis/" + std::string(group) + "/" + std::string(version);
  ++requests_;
  const HttpResponse resp = transport_.send(req);
  if (resp.status >= 200 && resp.status <= 299) return true;
  if (resp.status == 404) return false;
  throw decode_api_error(req, resp);
}

boost::json::object Client::server_version() {
  HttpRequest req;
  req.method = "GET";
  req.path = "/version";
  return send_json(std::move(req));
}

std::optional<std::vector<std::string>> Client::served_resources(std::string_view group, std::string_view version) {
  HttpRequest req;
  req.method = "GET";
  req.path = group.empty() ? "/api/" + std::string(version)
                           : "/apis/" + std::string(group) + "/" + std::string(version);
  std::optional<boost::json::object> list;
  try {
    list = send_json(std::move(req));
  } catch (const ApiError& e) {
    if (e.code() == 404) return std::nullopt;
    throw;
  }
  std::vector<std::string> out;
  const boost::json::value* resources = list->if_contains("resources");
  if (resources == nullptr || !resources->is_array())
    throw std::runtime_error("GET /apis/" + std::string(group) + "/" + std::string(version) +
                             ": the server's discovery answer has no resources list");
  for (const auto& r : resources->get_array()) {
    const std::string name = r.is_object() ? string_member(r.get_object(), "name") : std::string();
    if (!name.empty() && name.find('/') == std::string::npos)
      out.push_back(printable(name));  // "pods/log" is a subresource
  }
  return out;
}

}  // namespace mindie::kube
