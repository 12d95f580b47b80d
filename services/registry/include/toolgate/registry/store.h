// RegistryStore: the registry's tables in PostgreSQL (schema `registry`).
//
// Every method is one statement or one transaction with parameterised SQL. Failures: Unavailable
// when PostgreSQL cannot be reached, Internal for anything else unexpected; the documented
// outcomes (absent rows, conflicts) are values. Thread-safe (the pool is).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toolgate/pg/pg.h"
#include "toolgate/registry/code_cache.h"
#include "toolgate/registry/execution_counter.h"
#include "toolgate/registry/function_cache.h"
#include "toolgate/registry/requests.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

struct FunctionRecord {
  std::string id;
  std::string org_id;
  std::string org_name;
  std::string name;
  std::string description;
  std::string overview;
  std::string category;
  std::string sector;
  std::vector<std::string> tags;
  std::string visibility;
  int64_t price_micro_usd = 0;
  bool mcp = false;
  std::string icon_url;  // "" when it has none
  int64_t executions = 0;
  int64_t rating_sum = 0;  // stars of every rating
  int64_t rating_count = 0;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// A published version without its code. The JSON fields are filled only by GetVersion and
// InsertVersion; ListVersions leaves them empty.
struct VersionRecord {
  std::string function_id;
  std::string version;
  bool deprecated = false;  // set by its owner; it still runs (ListVersions fills it)
  std::string runtime;
  std::string compute_type;
  std::string input_schema_json;
  std::string output_schema_json;  // "" when the version declares none (GetVersion, Insert)
  std::vector<std::string> declared_keys;
  int32_t timeout_ms = 0;
  int32_t memory_mb = 0;
  std::string examples_json;
  int64_t published_at_ms = 0;
  int64_t price_micro_usd = 0;      // fixed at publishing
  std::vector<std::string> egress;  // as published
  // A bundle version's entry file, bundle digest, archive size and entry count; handler and
  // bundle_digest are "" for single-file code. Filled by every method, ListVersions included.
  std::string handler;
  std::string bundle_digest;
  int64_t bundle_size_bytes = 0;
  int64_t bundle_files = 0;
};

// One line of GET /workspace/tools.
struct FunctionSummary {
  std::string function_id;
  std::string name;
  std::string description;
  std::string org_id;
  std::string org_name;
  std::optional<std::string> latest_version;  // with runtime and compute_type; nullopt if none
  std::string runtime;
  std::string compute_type;
  int64_t price_micro_usd = 0;  // the latest version's; the function's while it has none
  std::string visibility;
  bool mcp = false;
};

// How a function's calls went over the last 7 UTC days (today included).
struct WeekStats {
  int64_t executions = 0;
  int64_t succeeded = 0;
  std::array<int64_t, kLatencyBuckets> latency{};
};

// Reads and writes registry.*; the FunctionSource of the invoke path's cache.
class RegistryStore : public FunctionSource {
 public:
  // pool must outlive the store.
  explicit RegistryStore(pg::Pool& pool) : pool_(pool) {}

  // Creates the schema and applies the embedded migrations.
  Status Migrate();

  // fields must be complete (ParseFunctionFields with creating = true).
  Result<FunctionRecord> CreateFunction(const FunctionFields& fields, const v1::Principal& owner);
  // nullopt when id is not a UUID or no function has it.
  Result<std::optional<FunctionRecord>> GetFunction(const std::string& id);
  // Applies the fields present to the function owned by org_id; NotFound when there is none.
  Result<FunctionRecord> UpdateFunction(const std::string& id, const std::string& org_id,
                                        const FunctionFields& fields);

  // Every published version, highest first (numeric order).
  Result<std::vector<VersionRecord>> ListVersions(const std::string& function_id);
  // One version with its schema, keys and examples; nullopt when not published.
  Result<std::optional<VersionRecord>> GetVersion(const std::string& function_id,
                                                  const std::string& version);
  // Publishes draft; Conflict when a version comparing equal is already published. A bundle is
  // stored under its digest unless a row holds it already, in the same transaction as the
  // version: a failed publish leaves neither.
  Result<VersionRecord> InsertVersion(const std::string& function_id, const VersionDraft& draft);
  // Whether a version comparing equal to parsed is published.
  Result<bool> HasEqualVersion(const std::string& function_id, const core::Version& parsed);
  // The code or bundle of a published version; nullopt when not published.
  Result<std::optional<VersionCode>> LoadCode(const std::string& function_id,
                                              const std::string& version);

  // Records that org_id added function_id at the returned time (ms); Conflict when it already
  // had.
  Result<int64_t> AddToWorkspace(const std::string& org_id, const std::string& function_id);
  // False when org_id had not added function_id.
  Result<bool> RemoveFromWorkspace(const std::string& org_id, const std::string& function_id);
  // The last 7 days of function_id's calls (daily_executions, daily_latency).
  Result<WeekStats> LastWeek(const std::string& function_id);
  // Marks version of function_id deprecated, or no longer. False when no such version is
  // published.
  Result<bool> SetVersionDeprecated(const std::string& function_id, const std::string& version,
                                    bool deprecated);
  // Unpublishes version of function_id for good, in one transaction: the version and its code
  // go (its bundle too, unless another version publishes it), its number is kept in
  // unpublished_versions so that publishing it again is a Conflict like any published number.
  // False when no such version is published.
  Result<bool> UnpublishVersion(const std::string& function_id, const std::string& version);
  // Stores org_id's secret mapping for function_id (X-Env-Keys syntax, already checked),
  // replacing any earlier one.
  Status SetWorkspaceEnvKeys(const std::string& org_id, const std::string& function_id,
                             const std::string& env_keys);
  // False when org_id had none stored for function_id.
  Result<bool> ClearWorkspaceEnvKeys(const std::string& org_id, const std::string& function_id);
  // org_id's stored mapping for function_id; nullopt when none is stored.
  Result<std::optional<std::string>> WorkspaceEnvKeys(const std::string& org_id,
                                                      const std::string& function_id);
  // Deletes function_id, which org_id owns, with its versions and everything the registry keeps
  // about it (workspace adds, favorites, ratings, run counts, bundles no other version
  // publishes), in one transaction; returns the organizations that had added it. NotFound when
  // org_id owns no such function. The billing records of its executions are billing's and stay.
  Result<std::vector<std::string>> DeleteFunction(const std::string& function_id,
                                                  const std::string& org_id);
  // The functions org_id owns, oldest first.
  Result<std::vector<FunctionSummary>> ListOwned(const std::string& org_id);
  // The public functions of other organizations that org_id added, in the order added.
  Result<std::vector<FunctionSummary>> ListAdded(const std::string& org_id);

  // Adds counts to functions.executions, the per-day counts and the runs of each calling
  // organization, in one transaction; ids that are not UUIDs, and functions that do not
  // exist, are skipped.
  Status AddExecutions(const ExecutionCounter::Counts& counts);

  // FunctionSource.
  Result<std::optional<CachedFunction>> LoadFunction(const std::string& function_id) override;
  Result<std::unordered_set<std::string>> LoadAdded(const std::string& org_id) override;

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::registry
