// Shell completion: Cobra's __complete protocol, which kubectl (>= 1.26) uses for plugins, answered from the
// command table (commands, their flags and -o values), the kubeconfig (contexts, clusters, users) and the cluster
// (namespaces holding a motor-config baseline).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace mindie {

/// Prints the completions of the last of `words` (the words typed after `kubectl mindie`; the last one is being
/// typed, possibly empty): candidates one per line ("candidate<TAB>description" when `descriptions`), then
/// ":<directive>". Returns 0.
int complete(std::vector<std::string> words, bool descriptions, std::ostream& out);

}  // namespace mindie
