// The sandbox's request handling: Kubernetes REST semantics over the in-memory store, independent of the HTTP
// library (main.cpp adapts httplib to HttpRequest/HttpResponse).
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "api_error.h"
#include "resources.h"
#include "store.h"

namespace mindie::sandbox {

/// What the handler needs from an HTTP request. `path` is decoded; `params` are the decoded query parameters.
struct HttpRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string content_type;
  std::string authorization;
  std::string accept;
  std::string body;
};

/// How a request ends when it is not answered normally (an injected fault the HTTP layer must carry out).
enum class Disruption {
  None,  ///< send the response
  Hang,  ///< hold the response until the client gives up (bounded by the HTTP layer)
  Drop,  ///< close the connection without any response
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  Disruption disruption = Disruption::None;  ///< not None: status/body are not sent
};

/// An injected failure (--fault METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]]): after letting the first `after` matching
/// requests through, the next `remaining` requests whose method (`*` = any) and whole path match fail as `kind`
/// says, without touching the store (`remaining` < 0: every matching request). KIND is an HTTP status code
/// (4xx/5xx; 429 carries Retry-After: 1, as kube-apiserver's throttling does), `hang` (no answer until the client
/// gives up) or `drop` (connection closed without an answer). AFTER lets a test fail the second write of a
/// command (e.g. an undo) while the first one succeeds; with `*:.*:KIND:1:N` it picks the request with ordinal N
/// (0-based) of the server's life.
struct Fault {
  std::string method;
  std::string path_pattern;
  std::regex path;
  int code = 500;                                  ///< the status, when disruption is None
  Disruption disruption = Disruption::None;
  int remaining = -1;
  int after = 0;
};

/// Parses a --fault SPEC. The regex is everything between the first ':' and the KIND field, found from the right
/// after at most two numeric fields, so it may itself contain ':'. Throws std::invalid_argument with the reason.
Fault parse_fault(const std::string& spec);

struct ServerOptions {
  std::string token;               ///< the bearer token every request must carry
  bool simulate_operator = false;  ///< play infer-operator after writes to InferServiceSets
  std::vector<Fault> faults;
  std::vector<std::string> namespaces;  ///< created at start besides "default"
};

/// A kube-apiserver stand-in. Thread-safe: requests are handled one at a time.
class ApiServer {
 public:
  ApiServer(Registry registry, ServerOptions options);

  /// Answers one request; never throws (internal failures become 500 Status responses).
  HttpResponse handle(const HttpRequest& request);

 private:
  struct Target;
  struct WriteContext;

  Registry registry_;
  ServerOptions options_;
  Store store_;
  std::mutex mu_;

  HttpResponse route(const HttpRequest& req);
  HttpResponse serve_resource(const HttpRequest& req, const Target& t);
  HttpResponse get_object(const HttpRequest& req, const Target& t);
  HttpResponse list_objects(const HttpRequest& req, const Target& t);
  HttpResponse create_object(const HttpRequest& req, const Target& t);
  HttpResponse update_object(const HttpRequest& req, const Target& t);
  HttpResponse patch_object(const HttpRequest& req, const Target& t);
  HttpResponse apply_object(const HttpRequest& req, const Target& t);
  HttpResponse delete_object(const HttpRequest& req, const Target& t);
  HttpResponse delete_collection(const HttpRequest& req, const Target& t);

  /// Validates and stores a create (`old` empty) or an update, keeping server-owned fields, generation and
  /// managedFields as kube-apiserver does; returns the stored object (or `old` unchanged for a no-op).
  nlohmann::json commit(const ResourceType& rt, const std::optional<nlohmann::json>& old, nlohmann::json object,
                        WriteContext& ctx);
  /// Checks `object` like kube-apiserver's validation for its type; prunes unknown fields of custom resources
  /// according to fieldValidation. Throws ApiError 422/400.
  void validate(const ResourceType& rt, nlohmann::json& object, WriteContext& ctx);
  /// Removes an object and, unless orphaning, everything it owns (ownerReferences) and, for a namespace, its
  /// contents.
  std::optional<nlohmann::json> remove_cascading(const ResourceType& rt, const std::string& ns,
                                                 const std::string& name, bool orphan);
  /// --simulate-operator: brings the pods and the status of InferServiceSet `iss` in line with its spec.
  void reconcile_infer_service_set(const nlohmann::json& iss);
  void require_namespace(const std::string& ns) const;
};

}  // namespace mindie::sandbox
