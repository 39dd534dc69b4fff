// Where two JSON documents differ, as paths: what update-config and scale compare between a new config and the
// baseline (deploy.py's update check).
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace mindie::util {

/// Every path at which `a` and `b` differ, in util::child_path's syntax ("motor_deploy_config.image_name"; array
/// elements as "x[2]"; an array whose length differs is reported as the array's own path, as deploy.py does). 5 and
/// 5.0 differ; 5 stored as a signed and an unsigned integer do not. Sorted.
std::vector<std::string> diff_paths(const boost::json::value& a, const boost::json::value& b);

}  // namespace mindie::util
