// What kubectl mindie logs reads and how it merges: the pods of a deployment, a role or an instance (by the labels
// each mode puts on them), and their logs, each line prefixed [role/instance/pod] as kubectl logs --prefix prefixes
// it, written whole as it comes; with follow, a watch on the pods starts the logs of pods that appear later and
// says when one goes.
#pragma once

#include <boost/json.hpp>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/pod_log.h"
#include "kube/watch.h"

namespace mindie::cmd {

/// Which pods: those of deployment `workload` in a mode, narrowed to a role and an instance.
struct LogTarget {
  std::string ns;
  std::string workload;            ///< the InferServiceSet, or the multi_deployment workload label
  bool plain_deployments = false;  ///< multi_deployment / single_container (baseline::runs_deployments)
  std::int64_t services = 1;       ///< infer_service_set: the InferServices of the set (status::service_count)
  std::string role;                ///< "" = every role
  std::int64_t instance = -1;      ///< -1 = every instance
};

/// The label selector of `target`'s pods: infer_service_set "infer.huawei.com/inferservice-name in (...)" plus
/// infer.huawei.com/instanceset-name=ROLE and instanceset-index=K (infer-operator's labels); the other modes
/// cmd::multi_selector plus app.kubernetes.io/component=ROLE and kubectl-mindie/instance-index=K.
std::string log_selector(const LogTarget& target);

/// The role `pod` belongs to, by the same labels ("" when it has none).
std::string log_role(const boost::json::object& pod, bool plain_deployments);

/// "[role/instance/pod]" of `pod` (the same labels; "-" for a label the pod lacks).
std::string log_prefix(const boost::json::object& pod, bool plain_deployments);

/// The container whose log is read: the kubectl.kubernetes.io/default-container annotation, else the first
/// container (kubectl logs' default).
std::string log_container(const boost::json::object& pod);

/// Writes the logs of `pods` to `out`, one pod after the other (no follow), each line prefixed; a pod whose log
/// cannot be read (its container not started) is named on `err` and skipped. Returns how many could not be read.
std::size_t print_logs(const kube::Informer::TransportFactory& new_transport, const LogTarget& target,
                       const std::vector<boost::json::object>& pods, const kube::PodLogOptions& options,
                       std::ostream& out, std::ostream& err);

/// Follows the logs of `target`'s pods until the process is stopped: one stream per running pod on a connection
/// of its own (at most `max_streams`; a pod beyond that is named on `err` and not followed), lines merged on
/// `out` as they come; a watch on the pods starts the streams of pods that start later and says on `err` when a
/// followed pod goes. Throws what the watch throws (ApiError, TransportError).
[[noreturn]] void follow_logs(const kube::Informer::TransportFactory& new_transport, const LogTarget& target,
                              const kube::PodLogOptions& options, std::size_t max_streams, std::ostream& out,
                              std::ostream& err);

}  // namespace mindie::cmd
