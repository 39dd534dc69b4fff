// libFuzzer target: kube::parse_kubeconfig must resolve its input or throw KubeconfigError, nothing else. Relative
// certificate and token paths resolve against a directory that does not exist, so only absolute paths are read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kube/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    mindie::kube::parse_kubeconfig(std::string(reinterpret_cast<const char*>(data), size), "fuzz",
                                   "/nonexistent-mindie-fuzz", mindie::kube::KubeconfigFlags{});
  } catch (const mindie::kube::KubeconfigError&) {
  }
  return 0;
}
