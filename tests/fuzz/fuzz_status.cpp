// libFuzzer target: kube::decode_api_error must turn any error answer into an ApiError — whatever the body (Status
// of the wrong shape, HTML, binary) and the Retry-After header — and the rendering must carry the HTTP code, the
// reason, the message and the request path, with no control characters but its own line breaks (what() is a C
// string: a NUL would cut it short). is_safe_to_retry must classify any patch body without throwing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kube/client.h"
#include "kube/retrying_transport.h"
#include "status_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const mindie::kube::HttpResponse resp = mindie::fuzz::status_response(input);
  mindie::kube::HttpRequest req;
  req.method = "PATCH";
  req.path = "/api/v1/namespaces/ns/configmaps/motor-config?fieldManager=kubectl-mindie";

  const mindie::kube::ApiError e = mindie::kube::decode_api_error(req, resp);
  const std::string text = e.render();
  if (e.code() != resp.status || e.reason().empty() || e.status_message().empty() || e.retry_after_seconds() < 0 ||
      e.retry_after_seconds() > 86400 ||
      !text.ends_with("\n(HTTP " + std::to_string(resp.status) +
                      ", PATCH /api/v1/namespaces/ns/configmaps/motor-config)") ||
      text != e.what() || text.find('\r') != std::string::npos) {
    std::abort();
  }

  for (const char* type :
       {"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}) {
    req.content_type = type;
    req.body = resp.body;
    mindie::kube::is_safe_to_retry(req);
  }
  return 0;
}
