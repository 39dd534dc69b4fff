// The sandbox's request handling: Kubernetes REST semantics over the in-memory store, independent of the HTTP
// library (main.cpp adapts httplib to HttpRequest/HttpResponse).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api_error.h"
#include "pod_state.h"
#include "resources.h"
#include "store.h"
#include "watch.h"

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
  /// Set for an accepted watch: the HTTP layer streams it (chunked) instead of `body`.
  std::shared_ptr<Watch> watch;
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

/// A --pod-state rule: simulated pods of `role` (`*` = every role) and, when set, instance `instance` start in
/// `state`.
struct PodStateRule {
  std::string role;
  std::optional<int> instance;
  PodState state = PodState::Ready;
};

/// Parses a --pod-state ROLE[:INSTANCE]=STATE. Throws std::invalid_argument with the reason.
PodStateRule parse_pod_state_rule(const std::string& spec);

struct ServerOptions {
  std::string token;               ///< the bearer token every request must carry
  bool simulate_operator = false;  ///< play infer-operator (and the workload controllers) after writes
  std::vector<Fault> faults;
  std::vector<std::string> namespaces;  ///< created at start besides "default"
  /// How often a watch with allowWatchBookmarks=true gets a BOOKMARK (kube-apiserver: about a minute).
  std::chrono::milliseconds bookmark_interval{1000};
  /// A watch without timeoutSeconds ends after a random time in [T, 2T), like kube-apiserver's
  /// --min-request-timeout (there 1800 s).
  std::chrono::seconds min_request_timeout{180};
  std::vector<PodStateRule> pod_states;  ///< applied to simulated pods as they are created; the last match wins
};

/// A kube-apiserver stand-in. Thread-safe: requests are handled one at a time.
class ApiServer {
 public:
  ApiServer(Registry registry, ServerOptions options);

  /// Answers one request; never throws (internal failures become 500 Status responses). A watch comes back at once
  /// with `watch` set; its events keep arriving after every later request that changes the store.
  ///
  /// Besides the Kubernetes API, three sandbox-only control endpoints (POST, same bearer token, outside /api and
  /// /apis, never subject to --fault) let tests play the cluster's other actors:
  ///   /sandbox/close-watches  ends every open watch abruptly (as a load balancer dropping connections);
  ///                           answers {"closed": N}
  ///   /sandbox/compact        drops the change history (an etcd compaction): a later watch from an older
  ///                           resourceVersion gets a 410 Expired ERROR event; answers {"compactedRevision": "RV"}
  ///   /sandbox/pod-state      body {"namespace": NS, "pod": NAME, "state": STATE} or {"namespace": NS, "role": ROLE
  ///                           (`*` = any), "instance": K (optional), "state": STATE}: sets the matching pods' state
  ///                           as kubelet/scheduler report it and records their Events (see pod_state.h); answers
  ///                           {"pods": [names]}, 404 when nothing matched, 400 for a bad body.
  HttpResponse handle(const HttpRequest& request);

  /// Ends every open watch abruptly and every later one at once (SIGTERM: the server must not wait for them).
  void shutdown();

 private:
  struct Target;
  struct WriteContext;

  Registry registry_;
  ServerOptions options_;
  Store store_;
  std::mutex mu_;
  std::vector<std::shared_ptr<Watch>> watchers_;
  std::vector<StoreEvent> pending_;          // changes of this request, for the watchers
  std::set<std::string> dirty_namespaces_;   // where a client changed what the simulated controllers own
  std::map<std::string, std::string> event_index_;  // identical-event key -> Event name (the event correlator)
  std::uint64_t event_serial_ = 0;
  bool stopping_ = false;

  HttpResponse handle_locked(const HttpRequest& req);
  HttpResponse route(const HttpRequest& req);
  HttpResponse control(const HttpRequest& req);
  HttpResponse set_pod_state(const HttpRequest& req);
  HttpResponse watch_objects(const HttpRequest& req, const Target& t);
  /// Pushes every change since the last dispatch to the open watches (called at the end of each request).
  void dispatch();
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
  /// contents. An object with finalizers, or a pod stuck terminating on a dead node, only gets its
  /// deletionTimestamp (unless `force`: a pod deleted with gracePeriodSeconds=0).
  std::optional<nlohmann::json> remove_cascading(const ResourceType& rt, const std::string& ns,
                                                 const std::string& name, bool orphan, bool force = false);
  /// --simulate-operator: brings InferServices, InstanceSets, workloads, ReplicaSets, Services and pods of
  /// InferServiceSet `iss` in line with its spec, then every status from the pods up.
  void reconcile_infer_service_set(const nlohmann::json& iss);
  nlohmann::json reconcile_infer_service(const nlohmann::json& is, const std::string& set_name, const std::string& now);
  nlohmann::json reconcile_instance_set(const nlohmann::json& ist, const std::string& set_name, const std::string& now);
  nlohmann::json reconcile_workload(const nlohmann::json& workload, const std::string& now);
  /// Reconciles every InferServiceSet of the namespaces clients changed in this request.
  void reconcile_dirty();
  /// --simulate-operator: plays the AIBrix controller for StormService `ss` (aibrix_sim.cpp): pods per role,
  /// replica and pod group, recreated when missing or when their role template changed, and the status.
  void reconcile_storm_service(const nlohmann::json& ss);
  /// Pods the AIBrix simulation created, "namespace/name" -> uid: a pod that is gone (or replaced) was killed,
  /// so its recreation records kubelet's Killing event about the earlier uid, as a real cluster shows it.
  std::map<std::string, std::string> storm_pod_uids_;
  /// The stored object named like `desired`, created when absent; with `update`, spec and labels follow `desired`.
  /// Null when the API rejects it (the real controllers only log such failures).
  nlohmann::json ensure(const ResourceType& rt, nlohmann::json desired, bool update, const std::string& manager);
  /// Writes `status` to `current` through the status subresource unless it is unchanged; returns the stored object.
  nlohmann::json write_status(const ResourceType& rt, const nlohmann::json& current, nlohmann::json status,
                              const std::string& manager);
  /// Objects of type `rt` whose ownerReferences name `owner`.
  std::vector<ObjectPtr> owned(const ResourceType& rt, const nlohmann::json& owner) const;
  /// Creates pod `name` of `pod_owner` (StatefulSet or ReplicaSet), in the --pod-state a rule gives it; returns the
  /// stored pod, null when the API rejected it.
  nlohmann::json create_pod(const nlohmann::json& pod_owner, const std::string& name, bool ready, const std::string& now);
  /// Stores a pod change as kubelet (or the scheduler) makes it and records its events.
  nlohmann::json apply_state(const nlohmann::json& pod, PodState state, const std::string& now);
  void record_pod_events(const nlohmann::json& pod, const std::vector<PodEventSpec>& events, const std::string& now);
  void require_namespace(const std::string& ns) const;
};

}  // namespace mindie::sandbox
