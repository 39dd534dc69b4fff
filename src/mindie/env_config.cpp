// Parsing and validation of env.json; see env_config.h.
#include "mindie/env_config.h"

#include <algorithm>
#include <cctype>

#include "util/json_path.h"
#include "validation/json_document.h"

namespace mindie::config {
namespace json = boost::json;
using util::child_path;
using validation::Reader;

EnvConfig parse_env_config(std::string raw, std::string_view source) {
  Reader r;
  auto doc = validation::read_json_object(raw, r);
  if (!doc) r.throw_if_any(source);

  // Each section becomes a bash function exporting its variables (deploy.py), so names must be shell
  // identifiers and values scalars; "version" is the file's format tag.
  auto shell_name = [](std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  };
  for (const auto& section : *doc) {
    const std::string name = child_path("", section.key());
    if (section.key() == "version") {
      r.string(section.value(), name);
      continue;
    }
    if (!section.value().is_object()) {
      r.add(name, "must be an object of variables, got " + r.describe(section.value()));
      continue;
    }
    for (const auto& var : section.value().get_object()) {
      const std::string path = child_path(name, var.key());
      if (!shell_name(var.key())) r.add(path, "is not a valid environment variable name");
      const auto& v = var.value();
      if (!(v.is_string() || v.is_number() || v.is_bool()))
        r.add(path, "must be a string, number or boolean, got " + r.describe(v));
      // The environment is a list of C strings: bash drops everything from a NUL on (with a warning).
      else if (v.is_string() && v.get_string().find('\0') != json::string::npos)
        r.add(path, "contains a NUL character (\\u0000), which no environment variable can hold");
    }
  }
  r.throw_if_any(source);
  EnvConfig env;
  env.raw = std::move(raw);
  env.doc = std::move(*doc);
  return env;
}

}  // namespace mindie::config
