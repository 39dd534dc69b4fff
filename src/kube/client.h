// A typed-enough Kubernetes REST client: paths from GVRs, Status errors, server-side apply, JSON/merge patches,
// paged lists, discovery. Knows the API's semantics and nothing of MindIE.
#pragma once

#include <boost/json.hpp>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kube/transport.h"

namespace mindie::kube {

/// Group/version/resource plus the kind and scope needed to build paths and objects.
struct GVR {
  std::string group;     ///< "" for the core group
  std::string version;   ///< "v1"
  std::string resource;  ///< plural lower-case, e.g. "configmaps"
  std::string kind;      ///< e.g. "ConfigMap"
  bool namespaced = true;

  /// "v1" for the core group, else "group/version".
  std::string api_version() const;
  /// "kind.group" as kubectl prints it ("configmap", "inferserviceset.mindcluster.huawei.com"): lower-case kind,
  /// group appended when not core.
  std::string kind_dot_group() const;
};

/// Well-known GVRs used by the product.
namespace gvr {
extern const GVR kConfigMaps;
extern const GVR kServiceAccounts;
extern const GVR kServices;
extern const GVR kPods;
extern const GVR kNamespaces;
extern const GVR kNodes;
extern const GVR kDeployments;
extern const GVR kStatefulSets;
extern const GVR kClusterRoles;
extern const GVR kClusterRoleBindings;
extern const GVR kRoles;
extern const GVR kRoleBindings;
extern const GVR kInferServiceSets;  ///< mindcluster.huawei.com/v1 inferservicesets
extern const GVR kInferServices;     ///< mindcluster.huawei.com/v1 inferservices (created by infer-operator)
extern const GVR kInstanceSets;      ///< mindcluster.huawei.com/v1 instancesets (created by infer-operator)
extern const GVR kEvents;            ///< core/v1 events
extern const GVR kPodGroups;         ///< scheduling.volcano.sh/v1beta1 podgroups (Volcano; infer-operator's gang roles)
/// The GVR for an object's apiVersion + kind among the ones above; nullptr when unknown.
const GVR* for_kind(std::string_view api_version, std::string_view kind);
}  // namespace gvr

/// One entry of a Status's details.causes.
struct StatusCause {
  std::string reason;
  std::string message;
  std::string field;
};

/// An HTTP error answer from the API server, decoded from its Status body (or synthesised from the HTTP status
/// when the body is not a Status: reason from the code — 401 Unauthorized, 403 Forbidden, 404 NotFound,
/// 409 Conflict, 422 Invalid, 429 TooManyRequests, 500 InternalError, 503 ServiceUnavailable, ... else "Unknown" —
/// and the body's first 200 characters as message). Decide on `reason`, never on `message` (API conventions).
/// retry_after_seconds() comes from the Retry-After header, else details.retryAfterSeconds; 0 when absent.
/// attempts() > 1 when a RetryingTransport sent the request that often before giving up.
class ApiError : public std::runtime_error {
 public:
  ApiError(int code, std::string reason, std::string message, std::vector<StatusCause> causes, std::string method,
           std::string path, int retry_after_seconds = 0, int attempts = 1);
  int code() const { return code_; }
  const std::string& reason() const { return reason_; }
  const std::string& status_message() const { return message_; }
  const std::vector<StatusCause>& causes() const { return causes_; }
  const std::string& method() const { return method_; }
  const std::string& path() const { return path_; }
  int retry_after_seconds() const { return retry_after_; }
  int attempts() const { return attempts_; }
  bool is_not_found() const { return reason_ == "NotFound"; }
  bool is_conflict() const { return reason_ == "Conflict"; }
  bool is_invalid() const { return reason_ == "Invalid"; }

  /// kubectl's rendering: "Error from server (Reason): message" then one "* field: message" line per cause
  /// (every cause, even when an Invalid message already lists them), then the HTTP code and the request without
  /// its query, "(HTTP 409, PATCH /apis/...)", so the failing resource is always named; after retries
  /// ", gave up after N attempts" is added inside the parentheses. what() returns the same text.
  std::string render() const;

 private:
  int code_;
  std::string reason_;
  std::string message_;
  std::vector<StatusCause> causes_;
  std::string method_;
  std::string path_;
  int retry_after_;
  int attempts_;
};

/// Decodes the error answer `resp` to `req` (any status; meant for non-2xx) as an ApiError: a Status body gives
/// reason, message, causes and details.retryAfterSeconds; any other body (an HTML page from a proxy, plain text,
/// nothing) gives the reason for the HTTP code and the body's first 200 characters as message. Control characters
/// in the server's text become spaces, so the rendering is one line per message or cause. The Retry-After
/// header (delta-seconds; an HTTP-date counts as absent) wins over details.retryAfterSeconds; both are clamped to
/// 0..86400. Never throws anything but std::bad_alloc: every input decodes (kube-apiserver's Status, API
/// conventions "Response Status Kind").
ApiError decode_api_error(const HttpRequest& req, const HttpResponse& resp);

/// Options common to writes.
struct WriteOptions {
  bool dry_run = false;  ///< sends dryRun=All
  std::string field_manager = "kubectl-mindie";
  bool force = false;  ///< apply only: force=true takes over conflicting fields
};

/// metadata.resourceVersion of `obj`, an API object read from the server (`what` names it: "configmap/motor-config").
/// Throws std::runtime_error saying the answer lacks it (every stored object has one; a proxy or a fake may not):
/// a precondition cannot be built without it.
std::string resource_version_of(const boost::json::object& obj, const std::string& what);

/// Patch flavours the product sends. Strategic merge is deliberately absent: custom resources reject it.
enum class PatchType {
  Json,   ///< application/json-patch+json (RFC 6902)
  Merge,  ///< application/merge-patch+json (RFC 7386)
};

/// REST client over an HttpTransport. Every method throws ApiError for an HTTP error status, TransportError
/// when the server cannot be reached, and std::runtime_error (naming the path) for a success answer whose body is
/// not a JSON object. Each call sends each request once; repeating failed ones is RetryingTransport's job.
class Client {
 public:
  explicit Client(HttpTransport& transport);

  /// Path of a collection or object: "/api/v1/namespaces/ns/configmaps[/name]" for the core group,
  /// "/apis/{group}/{version}/..." otherwise; `ns` ignored when cluster-scoped; an empty `ns` for a namespaced
  /// resource gives the all-namespaces collection. `ns` and `name` are percent-encoded.
  static std::string path(const GVR& r, std::string_view ns, std::string_view name = {});

  /// GET of one object.
  boost::json::object get(const GVR& r, std::string_view ns, std::string_view name);
  /// As get(), but NotFound gives std::nullopt.
  std::optional<boost::json::object> get_if_exists(const GVR& r, std::string_view ns, std::string_view name);
  /// Lists all items matching `label_selector` and `field_selector` (either may be empty), following `continue`
  /// tokens with `limit` per page (limit <= 0: no limit parameter). Returns the List object with every page's
  /// items concatenated and the last page's metadata (its resourceVersion is the one to watch from). A server
  /// repeating a continue token, or items that are not an array, raise runtime_error.
  boost::json::object list(const GVR& r, std::string_view ns, std::string_view label_selector = {}, int limit = 500,
                           std::string_view field_selector = {});
  /// As list(), but hands every item to `on_item` page by page instead of keeping them, and returns only the last
  /// page's metadata. Each page is parsed into one reused buffer, so memory stays at about one page whatever the
  /// collection's size: for callers that keep a small part of each item (status on thousands of pods). The item
  /// passed is valid only during the call.
  boost::json::object list_each(const GVR& r, std::string_view ns, std::string_view label_selector, int limit,
                                std::string_view field_selector,
                                const std::function<void(boost::json::object& item)>& on_item);
  /// Server-side apply of the full intended object `obj` (its metadata.name/namespace are used): PATCH with
  /// application/apply-patch+yaml (a JSON body, JSON being YAML) and ?fieldManager=..[&force=true][&dryRun=All].
  /// Throws std::invalid_argument, sending nothing, when metadata.name (or, if namespaced, metadata.namespace)
  /// is missing.
  boost::json::object apply(const GVR& r, const boost::json::object& obj, const WriteOptions& opts = {});
  /// PATCH with a JSON Patch (an array of ops) or merge patch, ?fieldManager=..[&dryRun=All]; opts.force is not
  /// sent (the API accepts it for apply only). Returns the patched object.
  boost::json::object patch(const GVR& r, std::string_view ns, std::string_view name, PatchType type,
                            const boost::json::value& patch, const WriteOptions& opts = {});
  /// POST of `obj` to its collection (namespace from metadata.namespace), ?fieldManager=..[&dryRun=All].
  /// Throws std::invalid_argument when a namespaced object has no metadata.namespace.
  boost::json::object create(const GVR& r, const boost::json::object& obj, const WriteOptions& opts = {});
  /// DELETE of one object, [?dryRun=All]; the server's default propagation policy applies.
  void remove(const GVR& r, std::string_view ns, std::string_view name, const WriteOptions& opts = {});
  /// As remove(), with a DeleteOptions body whose preconditions.resourceVersion is `resource_version`: the server
  /// answers 409 Conflict, deleting nothing, when the object changed since (API conventions, "Preconditions").
  void remove_if_unchanged(const GVR& r, std::string_view ns, std::string_view name, std::string_view resource_version,
                           const WriteOptions& opts = {});
  /// As remove(), deleting nothing (409 Conflict) unless the object is still the one read: its uid and, when
  /// given, its resourceVersion (DeleteOptions.preconditions; API conventions, "Preconditions"). A delete under the
  /// namespace lock carries both, so that a command that lost the lock cannot delete a successor's object.
  void remove_exact(const GVR& r, std::string_view ns, std::string_view name, std::string_view uid,
                    std::string_view resource_version, const WriteOptions& opts = {});
  /// Discovery: true when /apis/{group}/{version} (or /api/{version} for the core group "") answers 2xx, false on
  /// 404; other statuses throw ApiError.
  bool has_group_version(std::string_view group, std::string_view version);
  /// GET /version: the server's version.Info (gitVersion, platform, ...).
  boost::json::object server_version();
  /// Discovery: the names of the resources (subresources left out) /apis/{group}/{version} (or /api/{version})
  /// serves, or nothing on 404. A group version can be served while one of its CRDs is not: a write needs its
  /// resource. Other statuses throw ApiError; a body that is no APIResourceList, std::runtime_error.
  std::optional<std::vector<std::string>> served_resources(std::string_view group, std::string_view version);

  /// From now on every request ends by `deadline` where the transport supports it (HttpTransport::bound_until).
  void bound_until(std::chrono::steady_clock::time_point deadline, const std::string& what) {
    transport_.bound_until(deadline, what);
  }
  /// Lifts what bound_until() set (HttpTransport::lift_bound).
  void lift_bound() { transport_.lift_bound(); }
  /// Requests sent so far, failed ones included (for benchmarks and tests).
  std::size_t requests_sent() const { return requests_; }

 private:
  /// GETs every page of a list (the same parameters each time, `continue` following the last answer) and hands
  /// each parsed page to `on_page`; `storage_for_page` gives the memory the next page is parsed into.
  void page_through(const GVR& r, std::string_view ns, std::string_view label_selector, int limit,
                    std::string_view field_selector, const std::function<boost::json::storage_ptr()>& storage_for_page,
                    const std::function<void(boost::json::object& page)>& on_page);
  /// Sends `req`; parses the 2xx body into `storage` (default: the default resource).
  boost::json::object send_json(HttpRequest req, boost::json::storage_ptr storage = {});
  HttpTransport& transport_;
  std::size_t requests_ = 0;
};

/// Percent-encodes a query-string value (RFC 3986 unreserved characters kept).
std::string url_encode(std::string_view s);

}  // namespace mindie::kube
