#include "mindie/deployer_scripts.h"

#include <cctype>

namespace mindie::deployer_scripts {

const std::vector<Script>& scripts() {
  static const std::vector<Script> all = {
      {"boot.sh", Folder::Startup},
      {"common.sh", Folder::Startup},
      {"hccl_tools.py", Folder::Startup},
      {"mooncake_config.py", Folder::Startup},
      {"controller.sh", Folder::Roles},
      {"coordinator.sh", Folder::Roles},
      {"engine.sh", Folder::Roles},
      {"kv_pool.sh", Folder::Roles},
      {"kv_conductor.sh", Folder::Roles},
      {"mf_store.sh", Folder::Roles},
      {"all_combine_in_single_container.sh", Folder::Roles},
      {"probe.sh", Folder::Probe},
      {"probe.py", Folder::Probe},
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

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// True when `word` occurs in `text` not as part of a longer identifier (a case pattern `union)`, `"union"`).
bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !is_word_char(text[at - 1]);
    const std::size_t end = at + word.size();
    if (left && (end == text.size() || !is_word_char(text[end]))) return true;
  }
  return false;
}

bool contains_key(const boost::json::value& v, std::string_view key) {
  if (v.is_object()) {
    for (const auto& kv : v.get_object())
      if (kv.key() == key || contains_key(kv.value(), key)) return true;
  } else if (v.is_array()) {
    for (const auto& e : v.get_array())
      if (contains_key(e, key)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> script_warnings(const config::UserConfig& cfg,
                                         const std::map<std::string, std::string>& scripts) {
  std::vector<std::string> out;
  std::vector<const char*> roles;
  if (cfg.hybrid()) roles.push_back("union");
  if (cfg.encode) roles.push_back("encode");
  for (const char* role : roles)
    for (const char* key : {"boot.sh", "engine.sh"}) {
      const auto it = scripts.find(key);
      if (it != scripts.end() && !has_word(it->second, role))
        out.push_back(std::string(key) + " never names ROLE " + role + ", which this deployment's " + role +
                      " pods run: scripts older than PyMotor 7d15c04 stop them with \"Unknown ROLE\"; pass "
                      "--scripts-dir with the deployer folder of PyMotor 7d15c04 or later");
    }
  const auto mooncake = scripts.find("mooncake_config.py");
  const boost::json::value* conductor = cfg.doc.if_contains("kv_conductor_config");
  if (cfg.kv_conductor && conductor && contains_key(*conductor, "kvevent_instance") && mooncake != scripts.end() &&
      mooncake->second.find("lib.utils") != std::string::npos)
    out.push_back(
        "mooncake_config.py imports lib.utils, which motor-config does not hold and the kv-conductor pod "
        "does not mount: with kvevent_instance in kv_conductor_config the kv-conductor fails to start "
        "(ModuleNotFoundError; PyMotor 7d15c04 defect X6)");
  return out;
}

}  // namespace mindie::deployer_scripts
