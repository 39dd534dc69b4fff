// PyMotor's deployer scripts as motor-config stores them: which ConfigMap keys deploy.py stores, where each lives in
// the deployer folder operators keep (examples/deployer: startup/, startup/roles/, probe/), and which a config's
// roles run. Source: Ascend/MindIE-PyMotor 7d15c04 examples/deployer/lib/generator/k8s_utils.py,
// create_motor_config_configmap. Pure data; knows nothing of files or HTTP.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mindie/config.h"

namespace mindie::deployer_scripts {

/// The folder of the deployer tree a key lives in.
enum class Folder {
  Startup,  ///< startup/<key>
  Roles,    ///< startup/roles/<key>
  Probe,    ///< probe/<key>
};

/// One script key deploy.py stores in motor-config.
struct Script {
  const char* key;
  Folder folder;
};

/// Every script key deploy.py stores (user_config.json aside), in the appendix's order: boot.sh, common.sh,
/// hccl_tools.py, mooncake_config.py (startup/); controller.sh, coordinator.sh, engine.sh, kv_pool.sh,
/// kv_conductor.sh, mf_store.sh, all_combine_in_single_container.sh (startup/roles/); probe.sh, probe.py (probe/).
const std::vector<Script>& scripts();

/// The entry of `key`, or nullptr when deploy.py stores no such key.
const Script* find(std::string_view key);

/// The keys the pods of `cfg` run: boot.sh and common.sh (every container sources them), probe.sh (controller and
/// coordinator probes), and the role scripts boot.sh dispatches to by ROLE: controller.sh, coordinator.sh,
/// engine.sh; kv_pool.sh, kv_conductor.sh, mf_store.sh when those components are on;
/// all_combine_in_single_container.sh too for single_container (its one pod starts every component).
std::vector<std::string> needed(const config::UserConfig& cfg);

/// Warnings about the scripts motor-config will hold (`scripts`: key -> text) that cannot run what `cfg` deploys
/// (Ascend/MindIE-PyMotor 7d15c04 examples/deployer/startup/boot.sh, startup/roles/engine.sh): a boot.sh or engine.sh
/// that never names ROLE "union" (PD-hybrid) or "encode" (encode instances), as in PyMotor before 7d15c04, whose
/// boot.sh exits with "Unknown ROLE"; and the upstream defect the warning calls X6: a startup/mooncake_config.py that
/// imports lib.utils (absent from the ConfigMap) while kv_conductor_config holds kvevent_instance (at any depth), which
/// makes the kv-conductor fail to start. A script that is not there gives no warning (missing scripts are deploy's
/// error). One line per finding.
std::vector<std::string> script_warnings(const config::UserConfig& cfg,
                                         const std::map<std::string, std::string>& scripts);

}  // namespace mindie::deployer_scripts
