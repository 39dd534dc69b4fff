// Kubernetes' syntax rules for names, label and annotation keys, label values and resource quantities
// (k8s.io/apimachinery pkg/util/validation and pkg/api/resource), as the API server applies them, so input is
// refused before any request instead of by the server halfway through a deployment.
#pragma once

#include <optional>
#include <string_view>

namespace mindie::kube {

/// DNS-1123 label check (RFC 1123, apimachinery IsDNS1123Label): lower-case alphanumerics and '-', starts and ends
/// alphanumeric, at most 63 characters. Namespace names and most object names that become DNS names.
bool is_dns1123_label(std::string_view s);

/// DNS-1035 label check (apimachinery IsDNS1035Label): a DNS-1123 label that starts with a letter (Service names).
bool is_dns1035_label(std::string_view s);

/// DNS-1123 subdomain check (apimachinery IsDNS1123Subdomain): dot-separated parts of lower-case alphanumerics and
/// '-', each starting and ending alphanumeric, at most 253 characters in all.
bool is_dns1123_subdomain(std::string_view s);

/// Kubernetes qualified name (label and annotation keys, resource names; apimachinery IsQualifiedName): an optional
/// DNS-1123 subdomain prefix and '/', then a name of at most 63 characters of [A-Za-z0-9-_.] that starts and ends
/// alphanumeric.
bool is_qualified_name(std::string_view s);

/// Kubernetes label value (apimachinery IsValidLabelValue): empty, or at most 63 characters of [A-Za-z0-9-_.]
/// starting and ending alphanumeric.
bool is_label_value(std::string_view s);

/// The rule is_qualified_name checks, in words for validation messages ("must be ...").
inline constexpr std::string_view kQualifiedNameRule =
    "a Kubernetes qualified name: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', "
    "'_' or '.', starting and ending with a letter or digit";
/// The rule is_label_value checks, in words for validation messages ("must be ...").
inline constexpr std::string_view kLabelValueRule =
    "a valid label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

/// A Kubernetes resource quantity ("500m", "64Gi", "1e3", "16") as a number of base units, or nullopt when `s`
/// is not one (negative values included: resources cannot be negative). Grammar: apimachinery resource.Quantity
/// (decimal or binary SI suffix, or a decimal exponent).
std::optional<long double> parse_quantity(std::string_view s);

}  // namespace mindie::kube
