#include "mindie/env_script.h"

#include <regex>
#include <sstream>

namespace mindie::env_script {
namespace json = boost::json;

namespace {
constexpr const char* kBegin = "# >>> kubectl-mindie env.json: ";
constexpr const char* kEnd = "# <<< kubectl-mindie env.json: ";

// env.json scalars as the text the variable should hold (JSON spelling for numbers and booleans).
std::string scalar_text(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  return json::serialize(v);
}

void export_section(std::ostringstream& out, const config::EnvConfig* env, const char* section) {
  if (!env) return;
  const json::value* s = env->doc.if_contains(section);
  if (!s || !s->is_object()) return;
  for (const auto& kv : s->as_object())
    out << "  export " << std::string(kv.key()) << '=' << shell_quote(scalar_text(kv.value())) << '\n';
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}
}  // namespace

const std::vector<EnvFunction>& env_functions() {
  static const std::vector<EnvFunction> fns = {
      {"motor_common_env", "set_common_env", "common.sh"},
      {"motor_controller_env", "set_controller_env", "controller.sh"},
      {"motor_coordinator_env", "set_coordinator_env", "coordinator.sh"},
      {"motor_engine_prefill_env", "set_prefill_env", "engine.sh"},
      {"motor_engine_decode_env", "set_decode_env", "engine.sh"},
      {"motor_kv_cache_pool_env", "set_kv_pool_env", "kv_pool.sh"},
      {"motor_kv_conductor_env", "set_kv_conductor_env", "kv_conductor.sh"},
      {"motor_mf_store_env", "set_mf_store_env", "mf_store.sh"},
      {"motor_engine_union_env", "set_union_env", "engine.sh", "all_combine_in_single_container.sh",
       "motor_engine_prefill_env"},
      {"motor_engine_encode_env", "set_encode_env", "engine.sh", "all_combine_in_single_container.sh"},
  };
  return fns;
}

std::string shell_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += "'\\''";
    else if (c == '\n') out += "'$'\\n''";
    else if (c == '\r') out += "'$'\\r''";
    else out += c;
  }
  return out + "'";
}

std::vector<std::pair<std::string, std::string>> derived_common_env(const config::UserConfig& cfg,
                                                                    const std::string& service_id) {
  std::string north;
  if (const auto* nc = cfg.doc.if_contains("north_config"); nc && nc->is_object())
    if (const auto* n = nc->as_object().if_contains("name"); n && n->is_string()) north = n->as_string();
  return {{"ENGINE_TYPE", cfg.engine_type},
          {"MODEL_NAME", cfg.model_name},
          {"NORTH_PLATFORM", north},
          {"SERVICE_ID", service_id}};
}

std::string render_function(const EnvFunction& fn, const config::EnvConfig* env,
                            const std::vector<std::pair<std::string, std::string>>& derived) {
  std::ostringstream out;
  out << kBegin << fn.function << " (generated from env.json; edit env.json, not this text)\n";
  out << fn.function << "() {\n";
  for (const auto& [k, v] : derived) out << "  export " << k << '=' << shell_quote(v) << '\n';
  export_section(out, env, "motor_common_env");
  if (std::string_view(fn.section) != "motor_common_env") {
    const bool own = env && env->doc.contains(fn.section);
    export_section(out, env, own || !fn.fallback_section ? fn.section : fn.fallback_section);
  }
  out << "  :\n}\n" << kEnd << fn.function << '\n';
  return out.str();
}

std::string replace_function(const std::string& script, const std::string& name, const std::string& definition) {
  const auto lines = split_lines(script);
  const std::string begin = kBegin + name + " ";
  const std::string end = kEnd + name;
  const std::regex def("^\\s*(function\\s+)?" + name + "\\s*(\\(\\s*\\))?\\s*\\{?\\s*$");
  std::size_t from = lines.size(), to = lines.size();
  for (std::size_t i = 0; i < lines.size() && from == lines.size(); ++i) {
    if (lines[i].starts_with(begin)) {
      for (std::size_t j = i; j < lines.size(); ++j)
        if (lines[j] == end) {
          from = i;
          to = j;
          break;
        }
    }
  }
  if (from == lines.size()) {
    for (std::size_t i = 0; i < lines.size() && from == lines.size(); ++i) {
      if (!std::regex_match(lines[i], def)) continue;
      for (std::size_t j = i; j < lines.size(); ++j)
        if (lines[j].starts_with("}")) {
          from = i;
          to = j;
          break;
        }
    }
  }
  std::string out;
  if (from == lines.size()) {
    out = script;
    if (!out.empty() && out.back() != '\n') out += '\n';
    return out + definition;
  }
  for (std::size_t i = 0; i < from; ++i) out += lines[i] + '\n';
  out += definition;
  for (std::size_t i = to + 1; i < lines.size(); ++i) out += lines[i] + '\n';
  return out;
}

void inject(std::map<std::string, std::string>& data, const config::EnvConfig* env,
            const std::vector<std::pair<std::string, std::string>>& derived) {
  std::string all = "# Generated by kubectl-mindie from env.json: the functions PyMotor's startup scripts call.\n";
  for (const auto& fn : env_functions()) {
    const std::string text = render_function(fn, env, derived);
    all += text;
    for (const char* script : {fn.script, fn.also_script})
      if (auto it = script ? data.find(script) : data.end(); it != data.end())
        it->second = replace_function(it->second, fn.function, text);
  }
  data[kEnvFunctionsKey] = all;
}

}  // namespace mindie::env_script
