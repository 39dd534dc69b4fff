// deploy's writes: each rendered object as a change::Step (DeployOptions::object_step), the guarded baseline apply,
// the intent it records, and what follows the writes; declared as DeployOptions members in cmd/deploy.h.
#pragma once

#include <boost/json.hpp>
#include <string>

#include "kube/client.h"

namespace mindie::cmd {

/// metadata.name of a rendered object.
std::string object_name(const boost::json::object& obj);

/// The resource of a rendered object; std::logic_error for a kind the client does not know.
const kube::GVR& gvr_of(const boost::json::object& obj);

}  // namespace mindie::cmd
