// scale's pieces shared by its plans (cmd/scale_service_set.cpp, cmd/scale_engines.cpp) and its recovery: the
// counts as printed, the read-backs of the live roles, and what a failure report says the workload runs now.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/scale.h"
#include "kube/client.h"
#include "mindie/scale_plan.h"

namespace mindie::cmd {

/// "prefill 1, decode 2" (with ", encode N" when set), or "union 3" for PD-hybrid.
std::string counts_text(const InstanceCounts& c);
/// The scale flags that set `c`, for recovery commands (`encode`: the deployment has encode instances).
std::string counts_flags(const InstanceCounts& c, bool encode);
/// The baseline's count for `role` (prefill, decode, encode or union).
int baseline_count(const config::UserConfig& b, std::string_view role);
/// True when every role of `changes` in `live` is at its index with its target replicas.
bool already_applied(const boost::json::object& live, const std::vector<scale::RoleChange>& changes);
/// True when every role of `changes` in `live` runs the replicas it had when read (RoleChange::from).
bool roles_as_read(const boost::json::object& live, std::vector<scale::RoleChange> changes);
/// What the scaled roles of `name` run now, read for a failure report: "inferserviceset.../x now runs prefill 2,
/// decode 1" (someone else may have changed them meanwhile), or that it could not be read.
std::string service_set_now(kube::Client& client, const std::string& ns, const std::string& name,
                            const std::vector<scale::RoleChange>& changes, InstanceCounts live);
/// What the engine Deployments of `workload` run now, read for a failure report.
std::string engines_now(kube::Client& client, const std::string& ns, const std::string& workload,
                        const std::vector<std::pair<std::string, int>>& targets);

}  // namespace mindie::cmd
