// libFuzzer target: util::yaml_to_json_all must convert its input or throw YamlError, nothing else, and every
// converted document must survive json_to_yaml -> yaml_to_json unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/yaml_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mindie::util;
  try {
    for (const auto& doc : yaml_to_json_all(std::string(reinterpret_cast<const char*>(data), size), "fuzz"))
      if (yaml_to_json(json_to_yaml(doc), "round trip") != doc) __builtin_trap();
  } catch (const YamlError&) {
  }
  return 0;
}
