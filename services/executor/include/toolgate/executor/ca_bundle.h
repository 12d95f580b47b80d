// The CA bundle every sandbox trusts for TLS: the system's certificates plus, when the operator
// names one (executor --egress-ca-file), the operator's CA, for upstreams behind a TLS-inspecting
// proxy or a private PKI.
//
// One mechanism for the three runtimes: the executor writes the combined bundle once, at start,
// and every sandbox sees it read-only at kSandboxCaBundle (egress_fetch.h), named by
// SSL_CERT_FILE (Python's ssl, the Lua worker's libcurl, the JavaScript fetch thread) and
// NODE_EXTRA_CA_CERTS (node's own https). Without an operator CA none of that is set, and each
// runtime trusts the system's bundle (/etc/ssl/certs, shown read-only in every sandbox).
#pragma once

#include <string>

#include "toolgate/base/status.h"

namespace toolgate::executor {

// Writes system_bundle's text followed by operator_ca_file's into a new file under directory
// (which must exist), readable by all (sandboxes bind it as other host uids). Returns the new
// file's path. InvalidArgument when operator_ca_file cannot be read or holds no PEM certificate
// (or a BEGIN without its END); Internal when the file cannot be written. A missing
// system_bundle is taken as empty (a host without ca-certificates trusts the operator's CA
// only). Not thread-safe with itself on the same directory.
Result<std::string> WriteCaBundle(const std::string& operator_ca_file,
                                  const std::string& system_bundle, const std::string& directory);

}  // namespace toolgate::executor
