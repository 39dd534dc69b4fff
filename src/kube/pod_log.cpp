#include "kube/pod_log.h"

#include "kube/client.h"

namespace mindie::kube {

std::string pod_log_path(std::string_view ns, std::string_view pod, const PodLogOptions& options) {
  std::string path = Client::path(gvr::kPods, ns, pod) + "/log";
  std::string query;
  const auto add = [&query](const std::string& key, const std::string& value) {
    query += (query.empty() ? "?" : "&") + key + "=" + url_encode(value);
  };
  if (!options.container.empty()) add("container", options.container);
  if (options.follow) add("follow", "true");
  if (options.since_seconds) add("sinceSeconds", std::to_string(*options.since_seconds));
  if (options.tail_lines) add("tailLines", std::to_string(*options.tail_lines));
  if (options.previous) add("previous", "true");
  if (options.timestamps) add("timestamps", "true");
  return path + query;
}

void stream_pod_log(HttpTransport& transport, std::string_view ns, std::string_view pod, const PodLogOptions& options,
                    const std::function<void(std::string_view line)>& on_line,
                    const std::function<bool()>& keep_going) {
  HttpRequest req;
  req.method = "GET";
  req.path = pod_log_path(ns, pod, options);
  req.accept = "*/*";  // the log is text/plain; an error answer is still a JSON Status
  std::string buffer;  // the start of a line still arriving
  const StreamSink sink = [&](std::string_view chunk) {
    if (!keep_going()) return false;
    buffer.append(chunk);
    std::size_t begin = 0;
    for (std::size_t nl; (nl = buffer.find('\n', begin)) != std::string::npos; begin = nl + 1)
      on_line(std::string_view(buffer).substr(begin, nl - begin));
    buffer.erase(0, begin);
    return true;
  };
  const HttpResponse resp = transport.stream(req, sink);
  if (resp.aborted) return;
  if (resp.status < 200 || resp.status > 299) throw decode_api_error(req, resp);
  if (!buffer.empty()) on_line(buffer);
}

}  // namespace mindie::kube
