#include "api_error.h"

namespace mindie::sandbox {

using nlohmann::json;

ApiError::ApiError(int code, std::string reason, std::string message, json details)
    : std::runtime_error(std::move(message)), code_(code), reason_(std::move(reason)), details_(std::move(details)) {}

json ApiError::status() const {
  json s = {{"kind", "Status"}, {"apiVersion", "v1"},   {"metadata", json::object()}, {"status", "Failure"},
            {"message", what()}, {"reason", reason_}, {"code", code_}};
  if (!details_.empty()) s["details"] = details_;
  return s;
}

int ApiError::retry_after() const { return details_.value("retryAfterSeconds", 0); }

std::string reason_for_code(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "Unknown";
  }
}

namespace {

// "configmaps" or "inferservicesets.mindcluster.huawei.com" (schema.GroupResource.String()).
std::string qualified(const std::string& group, const std::string& name) {
  return group.empty() ? name : name + "." + group;
}

json details_of(const ErrorTarget& t, const std::string& kind) {
  json d = json::object();
  if (!t.name.empty()) d["name"] = t.name;
  if (!t.group.empty()) d["group"] = t.group;
  d["kind"] = kind;
  return d;
}

}  // namespace

ApiError not_found(const ErrorTarget& t) {
  return ApiError(404, "NotFound", qualified(t.group, t.resource) + " \"" + t.name + "\" not found",
                  details_of(t, t.resource));
}

ApiError already_exists(const ErrorTarget& t) {
  return ApiError(409, "AlreadyExists", qualified(t.group, t.resource) + " \"" + t.name + "\" already exists",
                  details_of(t, t.resource));
}

ApiError conflict(const ErrorTarget& t, const std::string& why) {
  return ApiError(409, "Conflict",
                  "Operation cannot be fulfilled on " + qualified(t.group, t.resource) + " \"" + t.name + "\": " + why,
                  details_of(t, t.resource));
}

ApiError invalid(const ErrorTarget& t, const std::vector<StatusCause>& causes) {
  std::string list;
  json jc = json::array();
  for (const auto& c : causes) {
    const std::string one = c.field.empty() ? c.message : c.field + ": " + c.message;
    list += (list.empty() ? "" : ", ") + one;
    jc.push_back({{"reason", c.reason}, {"message", c.message}, {"field", c.field}});
  }
  // utilerrors.NewAggregate prints a single error bare and several in brackets.
  const std::string body = causes.size() == 1 ? list : "[" + list + "]";
  json d = details_of(t, t.kind);
  d["causes"] = jc;
  return ApiError(422, "Invalid", qualified(t.group, t.kind) + " \"" + t.name + "\" is invalid: " + body, d);
}

ApiError bad_request(const std::string& message) { return ApiError(400, "BadRequest", message); }

ApiError method_not_allowed(const std::string& message) { return ApiError(405, "MethodNotAllowed", message); }

ApiError unsupported_media_type(const std::string& accepted) {
  return ApiError(415, "UnsupportedMediaType",
                  "the body of the request was in an unknown format - accepted media types include: " + accepted);
}

ApiError generic_error(int code, const std::string& message, int retry_after_seconds) {
  json d = json::object();
  if (retry_after_seconds > 0) d["retryAfterSeconds"] = retry_after_seconds;
  return ApiError(code, reason_for_code(code), message, d);
}

}  // namespace mindie::sandbox
