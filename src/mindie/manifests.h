// The built-in templates under manifests/, compiled into the binary by cmake/EmbedManifests.cmake.
#pragma once

#include <map>
#include <string_view>

namespace mindie::manifests {

/// Every file under manifests/, keyed by its path relative to manifests/ ("infer_service_set/inferserviceset.yaml"),
/// content byte for byte. Defined in the generated embedded_manifests.cpp.
const std::map<std::string_view, std::string_view>& embedded();

}  // namespace mindie::manifests
