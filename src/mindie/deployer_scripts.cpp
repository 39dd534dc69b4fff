#include "mindie/deployer_scripts.h"

namespace mindie::deployer_scripts {

const std::vector<Script>& scripts() {
  static const std::vector<Script> all = {
      {"boot.sh", Folder::Startup},          {"common.sh", Folder::Startup},
      {"hccl_tools.py", Folder::Startup},    {"mooncake_config.py", Folder::Startup},
      {"controller.sh", Folder::Roles},      {"coordinator.sh", Folder::Roles},
      {"engine.sh", Folder::Roles},          {"kv_pool.sh", Folder::Roles},
      {"kv_conductor.sh", Folder::Roles},    {"mf_store.sh", Folder::Roles},
      {"all_combine_in_single_container.sh", Folder::Roles},
      {"probe.sh", Folder::Probe},           {"probe.py", Folder::Probe},
  };
  return all;
}

const Script* find(std::string_view key) {
  for (const auto& s : scripts())
    if (key == s.key) return &s;
  return nullptr;
}

std::vector<std::string> needed(const config::UserConfig& cfg) {
  std::vector<std::string> out = {"boot.sh", "common.sh", "probe.sh", "controller.sh", "coordinator.sh", "engine.sh"};
  // single_container's one pod starts every component through the combined script.
  if (cfg.deploy_mode == config::DeployMode::SingleContainer) out.push_back("all_combine_in_single_container.sh");
  if (cfg.kv_pool) out.push_back("kv_pool.sh");
  if (cfg.kv_conductor) out.push_back("kv_conductor.sh");
  if (cfg.mf_store) out.push_back("mf_store.sh");
  return out;
}

}  // namespace mindie::deployer_scripts
