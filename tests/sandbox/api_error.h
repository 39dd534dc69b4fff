// Kubernetes Status errors (k8s.io/apimachinery/pkg/api/errors), thrown by the sandbox's handlers and turned into
// HTTP responses in one place.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace mindie::sandbox {

/// The resource a failing request addressed, as Status.details names it.
struct ErrorTarget {
  std::string group;     ///< "" for the core group
  std::string resource;  ///< plural, e.g. "configmaps"
  std::string kind;      ///< e.g. "ConfigMap"
  std::string name;
};

/// One Status cause (`details.causes[]`).
struct StatusCause {
  std::string reason;  ///< e.g. "FieldValueInvalid", "FieldManagerConflict"
  std::string message;
  std::string field;
};

/// A request failure carrying the full Status body. Handlers throw it; the server answers `code` with `status()`.
class ApiError : public std::runtime_error {
 public:
  ApiError(int code, std::string reason, std::string message, nlohmann::json details = nlohmann::json::object());

  int code() const { return code_; }
  const std::string& reason() const { return reason_; }
  /// The Status object: {kind, apiVersion, metadata, status: Failure, message, reason, details, code}.
  nlohmann::json status() const;
  /// Seconds for the Retry-After header (details.retryAfterSeconds), 0 when absent.
  int retry_after() const;

 private:
  int code_;
  std::string reason_;
  nlohmann::json details_;
};

/// The standard reason for an HTTP status code (StatusReason* in metav1), "Unknown" if none.
std::string reason_for_code(int code);

// Factories matching apimachinery's errors.New* (messages as kube-apiserver words them).
ApiError not_found(const ErrorTarget& t);
ApiError already_exists(const ErrorTarget& t);
/// 409 for a stale resourceVersion: `Operation cannot be fulfilled on configmaps "x": ...`.
ApiError conflict(const ErrorTarget& t, const std::string& why);
/// 422 `Kind[.group] "name" is invalid: ...` with one cause per violation.
ApiError invalid(const ErrorTarget& t, const std::vector<StatusCause>& causes);
ApiError bad_request(const std::string& message);
ApiError method_not_allowed(const std::string& message);
/// 415 listing the media types the resource accepts (`accepted` is the comma-separated list).
ApiError unsupported_media_type(const std::string& accepted);
/// Any code with its standard reason and a generic message (used by --fault).
ApiError generic_error(int code, const std::string& message, int retry_after_seconds = 0);

}  // namespace mindie::sandbox
