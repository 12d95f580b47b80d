#include "toolgate/pg/service.h"

#include "toolgate/core/service_main.h"

namespace toolgate::pg {

std::unique_ptr<Pool> ConnectFromFlags(const std::string& service, const Flags& flags,
                                       size_t size) {
  if (size == 0) size = static_cast<size_t>(flags.GetInt("pg-pool"));
  auto pool =
      std::make_unique<Pool>(flags.Get("postgres-url"), size,
                             core::SecretFromFlag(service, flags, "postgres-password-file"));
  if (Status s = pool->WaitReady(static_cast<int>(flags.GetInt("pg-wait-ms"))); !s.ok()) {
    core::Die(service, "cannot reach PostgreSQL", s.ToString());
  }
  return pool;
}

std::unique_ptr<core::ReadinessCheck> ReadinessFromFlags(const std::string& service,
                                                         const Flags& flags) {
  return std::make_unique<core::ReadinessCheck>(
      "postgres", [url = flags.Get("postgres-url"),
                   password = core::SecretFromFlag(service, flags, "postgres-password-file")] {
        return Ping(url, password, core::kReadinessTimeout);
      });
}

}  // namespace toolgate::pg
