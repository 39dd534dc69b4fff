// What status and wait read: StatusInputs from one GET or LIST per kind, or kept current by an informer.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/watch.h"
#include "mindie/status_report.h"

namespace mindie::cmd {

/// multi_deployment: the watch targets keeping StatusInputs current: motor-config, the Deployments and pods of
/// workload `name` (cmd::multi_selector), warning events, the Services (same selector).
std::vector<kube::WatchTarget> multi_status_watch_targets(const std::string& ns, const std::string& name);

/// StatusInputs from an informer started with multi_status_watch_targets.
status::StatusInputs inputs_from_multi_informer(const kube::Informer& informer);

/// Reads StatusInputs for namespace `ns` (multi_deployment: GET motor-config, one LIST each of Deployments, pods
/// and Services by cmd::multi_selector, events on trouble). Otherwise: GET motor-config (CommandError "no
/// deployment found" when absent), GET the InferServiceSet, then when it exists one LIST each of InferServices,
/// InstanceSets, StatefulSets, Deployments, pods and Services, and one LIST of warning events only when some pod is
/// not ready or fewer pods exist than the set asks for (the operator's events then say why). A 403 on listing
/// Services is recorded in services_unknown. Throws ApiError / TransportError /
/// CommandError / baseline::BaselineError (nothing names the workload).
status::StatusInputs read_status_inputs(kube::Client& client, const std::string& ns);

/// The watch targets that keep StatusInputs current for InferServiceSet `name` (with `services` InferServices)
/// in `ns`, in the order StatusInputs lists them: motor-config, the set, InferServices, InstanceSets, pods, events,
/// then StatefulSets and Deployments (the workloads), then Services.
std::vector<kube::WatchTarget> status_watch_targets(const std::string& ns, const std::string& name,
                                                    std::int64_t services);

/// StatusInputs from an informer started with status_watch_targets.
status::StatusInputs inputs_from_informer(const kube::Informer& informer);

}  // namespace mindie::cmd
