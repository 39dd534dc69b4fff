// The pod log API (GET /api/v1/namespaces/NS/pods/P/log, core/v1 PodLogOptions), read as a stream of lines over the
// same transport path a watch uses (HttpTransport::stream). Knows the API, nothing of MindIE.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "kube/transport.h"

namespace mindie::kube {

/// The PodLogOptions the product sends (k8s.io/api core/v1 types.go, PodLogOptions).
struct PodLogOptions {
  std::string container;                      ///< "" lets the server pick (a pod of one container)
  bool follow = false;                        ///< keep the stream open while the container runs
  std::optional<std::int64_t> since_seconds;  ///< only lines newer than this many seconds
  std::optional<std::int64_t> tail_lines;     ///< only the last N lines
  bool previous = false;                      ///< the previous, terminated instance of the container
  bool timestamps = false;                    ///< each line starts with its RFC 3339 time
};

/// The request path: /api/v1/namespaces/NS/pods/P/log?container=..&follow=true&sinceSeconds=..&tailLines=..&
/// previous=true&timestamps=true (only what is set), values percent-encoded.
std::string pod_log_path(std::string_view ns, std::string_view pod, const PodLogOptions& options);

/// Reads the log of pod `pod` in `ns` through `transport`, handing each line (without its newline; a last line
/// without one too) to `on_line` as it arrives. Returns when the server ends the log (the container ended, or
/// without follow the log was read), or when `keep_going` (called at least once a second) returns false. Throws
/// ApiError for an error answer (400 "container ... is waiting to start", 404 the pod is gone), TransportError
/// when the server cannot be reached or the stream breaks.
void stream_pod_log(HttpTransport& transport, std::string_view ns, std::string_view pod, const PodLogOptions& options,
                    const std::function<void(std::string_view line)>& on_line, const std::function<bool()>& keep_going);

}  // namespace mindie::kube
