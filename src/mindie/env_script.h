// env.json → the bash functions PyMotor's startup scripts call (set_common_env, set_controller_env, ...), written
// into the ConfigMap copies of those scripts. Pure: strings in, strings out.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mindie/config.h"
#include "mindie/env_config.h"

namespace mindie::env_script {

/// One env.json section and the function PyMotor's scripts call to export it (deploy.py behaviour doc, "env.json").
struct EnvFunction {
  const char* section;   ///< env.json section, e.g. "motor_controller_env"
  const char* function;  ///< bash function, e.g. "set_controller_env"
  const char* script;    ///< the ConfigMap script key that defines it, e.g. "controller.sh"
  /// A second script that gets the function too (PyMotor 7d15c04 writes set_union_env and set_encode_env into
  /// all_combine_in_single_container.sh as well), or null.
  const char* also_script = nullptr;
  /// The env.json section exported instead when `section` is absent (set_union_env: motor_engine_prefill_env), or
  /// null.
  const char* fallback_section = nullptr;
};

/// The ten functions: common (common.sh), controller, coordinator, prefill and decode (engine.sh), kv-pool,
/// kv-conductor, mf-store, and PyMotor 7d15c04's union and encode (engine.sh and the single-container script;
/// Ascend/MindIE-PyMotor 7d15c04 examples/deployer/startup/roles/engine.sh).
const std::vector<EnvFunction>& env_functions();

/// ConfigMap key holding every generated function, for scripts that are not stored (no --scripts-dir) or that
/// source one file.
inline constexpr const char* kEnvFunctionsKey = "env_functions.sh";

/// `value` as one bash word that expands to exactly `value`: single-quoted, a `'` written as '\'' and a newline as
/// '$'\n'' so the word stays on one line (the function's replacement in a stored script works line by line).
std::string shell_quote(std::string_view value);

/// The variables derived from user_config.json that PyMotor adds to the common section: ENGINE_TYPE, MODEL_NAME,
/// NORTH_PLATFORM (north_config.name; empty when absent) and SERVICE_ID (`service_id`, generated once per
/// deployment and kept on motor-config).
std::vector<std::pair<std::string, std::string>> derived_common_env(const config::UserConfig& cfg,
                                                                    const std::string& service_id);

/// The text of function `fn` for `env` (may be null: derived values only): a begin marker line, `NAME() {`, one
/// `export KEY=WORD` per variable of the common section (derived values first, then env.json's, which win), then,
/// unless `fn` is set_common_env, the function's own section (its fallback section when env.json lacks it; winning
/// over common), `}`, an end marker line. Values
/// are env.json's scalars as text (numbers/booleans in their JSON spelling). Keys were checked as shell identifiers
/// by config::parse_env_config.
std::string render_function(const EnvFunction& fn, const config::EnvConfig* env,
                            const std::vector<std::pair<std::string, std::string>>& derived);

/// `script` with function `name`'s definition replaced by `definition`: between our markers when a previous render
/// left them, else PyMotor's own definition (from the `NAME() {` / `function NAME {` line to the next line that is
/// `}` at column 0), else `definition` appended. Idempotent: replacing twice gives the same text.
std::string replace_function(const std::string& script, const std::string& name, const std::string& definition);

/// Writes the functions into `data` (ConfigMap data: key → text): each into its scripts (script, also_script) when
/// `data` holds them, and all of them into kEnvFunctionsKey.
void inject(std::map<std::string, std::string>& data, const config::EnvConfig* env,
            const std::vector<std::pair<std::string, std::string>>& derived);

}  // namespace mindie::env_script
