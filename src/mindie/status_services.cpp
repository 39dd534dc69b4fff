// build_report's Services: the deployment's Services as `kubectl get service` shows them.
#include <algorithm>

#include "mindie/status_internal.h"
#include "util/json_path.h"

namespace mindie::status::detail {

namespace json = boost::json;

std::vector<ServiceStatus> list_services(const json::array& services) {
  using util::find;
  using util::num;
  using util::str;
  std::vector<ServiceStatus> out;
  for (const auto& svc : services) {
    if (!svc.is_object()) continue;
    const json::value* spec = find(&svc, {"spec"});
    ServiceStatus row;
    row.cluster_ip = str(find(spec, {"clusterIP"}));
    if (row.cluster_ip == "None") continue;  // the operator's headless per-instance Services
    row.name = str(find(&svc, {"metadata", "name"}));
    row.type = str(find(spec, {"type"}));
    if (row.type.empty()) row.type = "ClusterIP";
    if (const auto* ports = find(spec, {"ports"}); ports && ports->is_array())
      for (const auto& p : ports->as_array()) {
        json::object port{{"name", str(find(&p, {"name"}))}, {"port", num(find(&p, {"port"}))}};
        if (const auto n = num(find(&p, {"nodePort"})); n > 0) port["nodePort"] = n;
        const std::string protocol = str(find(&p, {"protocol"}));
        port["protocol"] = protocol.empty() ? "TCP" : protocol;
        row.ports.push_back(std::move(port));
      }
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(), [](const ServiceStatus& a, const ServiceStatus& b) { return a.name < b.name; });
  return out;
}

}  // namespace mindie::status::detail
