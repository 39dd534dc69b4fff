// Which differences from the baseline each command accepts (deploy.py's update rules, kept, with its defects
// fixed). Knows config documents, not HTTP.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mindie/config.h"

namespace mindie::policy {

/// JSON paths of the instance counts, the only fields `scale -f` may change.
inline constexpr const char* kPrefillInstancesPath = "motor_deploy_config.p_instances_num";
inline constexpr const char* kDecodeInstancesPath = "motor_deploy_config.d_instances_num";
/// PD-hybrid: instances of the union role.
inline constexpr const char* kHybridInstancesPath = "motor_deploy_config.hybrid_instances_num";
/// EPD: encode instances (multi_deployment; PyMotor 7d15c04 U5).
inline constexpr const char* kEncodeInstancesPath = "motor_deploy_config.e_instances_num";

/// The paths update-config may change (the published deployer's whitelist): north TLS files, north_config,
/// log levels, observability, coordinator exception/timeout settings.
const std::vector<std::string>& update_config_whitelist();

/// `doc` (a user_config.json document) as it compares with another: what PyMotor's deploy.py 7d15c04 writes into
/// the baselines it stores although the user never wrote it is made to read as the user's file would
/// (Ascend/MindIE-PyMotor 7d15c04 examples/deployer/lib/generator/k8s_utils.py, create_motor_config_configmap): an
/// absent motor_deploy_config.deploy_mode is the resolved "infer_service_set", and kv_cache_pool_config.port 50088 and
/// default_kv_lease_ttl 11000 (the defaults it injects) are dropped. Anything not an object is returned as it is.
boost::json::value comparable(const boost::json::value& doc);

/// The paths at which `baseline` and `proposed` differ and that are not `allowed` (an allowed path covers
/// everything below it), both compared as comparable() gives them, so a baseline deploy.py 7d15c04 stored does not
/// differ from the user's file. A difference at a parent of allowed paths (a section added or removed whole) is
/// accepted only when every leaf below it is allowed. Sorted, each path once.
std::vector<std::string> disallowed_changes(const boost::json::value& baseline, const boost::json::value& proposed,
                                            const std::vector<std::string>& allowed);

/// Everything in `proposed` that update-config may not apply over `base` (the baseline of a `mode` deployment), each
/// with the way out; all of them, so that one run names every problem (issue 33: it took one run per problem).
std::vector<std::string> update_config_refusals(const config::UserConfig& base, const config::UserConfig& proposed,
                                                const std::string& mode);

/// The command that carries out a change of the baseline (what `kubectl mindie diff` names for each path).
enum class Applier {
  Scale,          ///< the instance counts
  UpdateConfig,   ///< update_config_whitelist()'s paths
  DeployRollout,  ///< the rest: the pods read them at start, so deploy, then rollout restart
  Redeploy,       ///< deploy_mode and job_id: only a new deployment (delete, then deploy) changes them
};

/// The command line words of `a`: "scale", "update-config", "deploy + rollout restart", "delete + deploy".
const char* applier_text(Applier a);

/// One path at which a new config differs from the baseline: its old and new values (nullopt where absent).
struct BaselineChange {
  std::string path;
  std::optional<boost::json::value> from;
  std::optional<boost::json::value> to;
  Applier by;
};

/// Every path at which `baseline` and `proposed` differ (as util::diff_paths finds them, both compared as
/// comparable() gives them), with its values and the command that applies it. Sorted by path.
std::vector<BaselineChange> baseline_changes(const boost::json::value& baseline, const boost::json::value& proposed);

}  // namespace mindie::policy
