// libFuzzer target: config::parse_user_config must accept its input or throw ValidationError, nothing else; an
// accepted document must convert to YAML and back unchanged or be refused by json_to_yaml with YamlError
// (deploy --dry-run -o yaml prints it).
#include <cstddef>
#include <cstdint>
#include <string>

#include "mindie/config.h"
#include "util/yaml_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto cfg = mindie::config::parse_user_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    const boost::json::value doc = cfg.doc;
    std::string yaml;
    try {
      yaml = mindie::util::json_to_yaml(doc);
    } catch (const mindie::util::YamlError&) {
      return 0;  // strings YAML cannot carry (U+FFFF): a clear error, not an altered document
    }
    if (mindie::util::yaml_to_json(yaml, "round trip") != doc) __builtin_trap();
  } catch (const mindie::validation::ValidationError&) {
  }
  return 0;
}
