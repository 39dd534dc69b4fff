// The env.json of PyMotor's deployer: per component, the environment variables its start script exports.
// Knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>

#include "validation/problem.h"

namespace mindie::config {

/// An env.json: section name -> (variable -> value as a string). Values that are numbers or booleans in the
/// file are kept in their JSON spelling. `raw` is the exact input.
struct EnvConfig {
  std::string raw;
  boost::json::object doc;
};

/// Parses env.json text: an object of sections, each an object of scalar values (string, number, boolean) keyed by
/// shell variable names (deploy.py exports each section from a bash function); a top-level "version" string is
/// allowed. `source` names the file in messages. Throws validation::ValidationError listing every problem (syntax
/// and structure as validation::read_json_object reports them).
EnvConfig parse_env_config(std::string raw, std::string_view source);

}  // namespace mindie::config
