#include "toolgate/registry/store.h"

#include "RegistryMigrations.h"
#include "store_sql.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"

namespace toolgate::registry {
namespace {

// Arrays cross the libpq boundary as JSON text: no hand-made array literals to escape.
std::string ToJsonArray(const std::vector<std::string>& values) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& v : values) w.String(v);
  w.EndArray();
  return w.Take();
}

constexpr const char* kFunctionColumns =
    "id::text, org_id, org_name, name, description, overview, category, sector, "
    "array_to_json(tags)::text, visibility, price_micro_usd, mcp, executions, rating_sum, "
    "rating_count, floor(extract(epoch FROM created_at) * 1000)::bigint, "
    "floor(extract(epoch FROM updated_at) * 1000)::bigint, icon_url";

FunctionRecord ReadFunction(const pg::Rows& rows, int r) {
  FunctionRecord f;
  f.id = rows.Str(r, 0);
  f.org_id = rows.Str(r, 1);
  f.org_name = rows.Str(r, 2);
  f.name = rows.Str(r, 3);
  f.description = rows.Str(r, 4);
  f.overview = rows.Str(r, 5);
  f.category = rows.Str(r, 6);
  f.sector = rows.Str(r, 7);
  f.tags = StringsFromJson(rows.Str(r, 8));
  f.visibility = rows.Str(r, 9);
  f.price_micro_usd = rows.Int(r, 10);
  f.mcp = rows.Bool(r, 11);
  f.executions = rows.Int(r, 12);
  f.rating_sum = rows.Int(r, 13);
  f.rating_count = rows.Int(r, 14);
  f.created_at_ms = rows.Int(r, 15);
  f.updated_at_ms = rows.Int(r, 16);
  f.icon_url = rows.Str(r, 17);
  return f;
}

pg::Param Opt(const std::optional<std::string>& v) {
  return v ? pg::Param(*v) : std::nullopt;
}

constexpr const char* kSummarySelect =
    "SELECT f.id::text, f.name, f.description, f.org_id, f.org_name, v.version, v.runtime, "
    "v.compute_type, COALESCE(v.price_micro_usd, f.price_micro_usd), f.visibility, f.mcp "
    "FROM registry.functions f "
    "LEFT JOIN LATERAL (SELECT version, runtime, compute_type, price_micro_usd "
    "  FROM registry.versions "
    "  WHERE function_id = f.id ORDER BY p1 DESC, p2 DESC, p3 DESC, p4 DESC LIMIT 1) v ON true ";

std::vector<FunctionSummary> ReadSummaries(const pg::Rows& rows) {
  std::vector<FunctionSummary> out;
  for (int r = 0; r < rows.size(); ++r) {
    FunctionSummary s;
    s.function_id = rows.Str(r, 0);
    s.name = rows.Str(r, 1);
    s.description = rows.Str(r, 2);
    s.org_id = rows.Str(r, 3);
    s.org_name = rows.Str(r, 4);
    if (!rows.IsNull(r, 5)) {
      s.latest_version = rows.Str(r, 5);
      s.runtime = rows.Str(r, 6);
      s.compute_type = rows.Str(r, 7);
    }
    s.price_micro_usd = rows.Int(r, 8);
    s.visibility = rows.Str(r, 9);
    s.mcp = rows.Bool(r, 10);
    out.push_back(std::move(s));
  }
  return out;
}

// A version's egress list and bundle, read by ReadBundleColumns from five columns starting at
// the given one; the query joins registry.versions v with TG_BUNDLE_JOIN.
#define TG_BUNDLE_COLUMNS \
  "array_to_json(v.egress)::text, v.handler, v.bundle_digest, b.size_bytes, b.files"
#define TG_BUNDLE_JOIN "LEFT JOIN registry.bundles b ON b.digest = v.bundle_digest "

void ReadBundleColumns(const pg::Rows& rows, int r, int first, VersionRecord* v) {
  v->egress = StringsFromJson(rows.Str(r, first));
  if (rows.IsNull(r, first + 2)) return;
  v->handler = rows.Str(r, first + 1);
  v->bundle_digest = rows.Str(r, first + 2);
  v->bundle_size_bytes = rows.Int(r, first + 3);
  v->bundle_files = rows.Int(r, first + 4);
}

}  // namespace

Status RegistryStore::Migrate() {
  return pg::Migrate(pool_, "registry", RegistryMigrations());
}

Result<FunctionRecord> RegistryStore::CreateFunction(const FunctionFields& f,
                                                     const v1::Principal& owner) {
  auto rows = pool_.Exec(
      std::string("INSERT INTO registry.functions (id, org_id, org_name, name, description, "
                  "overview, category, sector, tags, visibility, price_micro_usd, mcp, icon_url) "
                  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                  "ARRAY(SELECT jsonb_array_elements_text($9::jsonb)), $10, $11, $12, $13) "
                  "RETURNING ") +
          kFunctionColumns,
      {NewUuid(), owner.org_id(), owner.org_name(), *f.name, *f.description, *f.overview,
       *f.category, *f.sector, ToJsonArray(*f.tags), *f.visibility,
       std::to_string(*f.price_micro_usd), *f.mcp ? "true" : "false", *f.icon_url});
  if (!rows.ok()) return rows.status();
  return ReadFunction(*rows, 0);
}

Result<std::optional<FunctionRecord>> RegistryStore::GetFunction(const std::string& id) {
  if (!IsUuid(id)) return std::optional<FunctionRecord>();
  auto rows = pool_.Exec(
      std::string("SELECT ") + kFunctionColumns + " FROM registry.functions WHERE id = $1", {id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<FunctionRecord>();
  return std::optional<FunctionRecord>(ReadFunction(*rows, 0));
}

Result<FunctionRecord> RegistryStore::UpdateFunction(const std::string& id,
                                                     const std::string& org_id,
                                                     const FunctionFields& f) {
  if (!IsUuid(id)) return Status::NotFound("no such function");
  pg::Param tags = f.tags ? pg::Param(ToJsonArray(*f.tags)) : std::nullopt;
  pg::Param price =
      f.price_micro_usd ? pg::Param(std::to_string(*f.price_micro_usd)) : std::nullopt;
  pg::Param mcp = f.mcp ? pg::Param(*f.mcp ? "true" : "false") : std::nullopt;
  auto rows = pool_.Exec(
      std::string("UPDATE registry.functions SET name = COALESCE($3, name), "
                  "description = COALESCE($4, description), overview = COALESCE($5, overview), "
                  "category = COALESCE($6, category), sector = COALESCE($7, sector), "
                  "tags = CASE WHEN $8::jsonb IS NULL THEN tags "
                  "  ELSE ARRAY(SELECT jsonb_array_elements_text($8::jsonb)) END, "
                  "visibility = COALESCE($9, visibility), "
                  "price_micro_usd = COALESCE($10::bigint, price_micro_usd), "
                  "mcp = COALESCE($11::boolean, mcp), icon_url = COALESCE($12, icon_url), "
                  "updated_at = now() "
                  "WHERE id = $1 AND org_id = $2 RETURNING ") +
          kFunctionColumns,
      {id, org_id, Opt(f.name), Opt(f.description), Opt(f.overview), Opt(f.category), Opt(f.sector),
       tags, Opt(f.visibility), price, mcp, Opt(f.icon_url)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::NotFound("no such function");
  return ReadFunction(*rows, 0);
}

Result<std::vector<VersionRecord>> RegistryStore::ListVersions(const std::string& function_id) {
  auto rows = pool_.Exec(
      "SELECT v.version, v.runtime, v.compute_type, " TG_EPOCH_MS("v.published_at") ", "
      "v.price_micro_usd, " TG_BUNDLE_COLUMNS ", v.deprecated FROM registry.versions v "
      TG_BUNDLE_JOIN "WHERE v.function_id = $1 ORDER BY v.p1 DESC, v.p2 DESC, v.p3 DESC, v.p4 DESC",
      {function_id});
  if (!rows.ok()) return rows.status();
  std::vector<VersionRecord> out;
  for (int r = 0; r < rows->size(); ++r) {
    VersionRecord v;
    v.function_id = function_id;
    v.version = rows->Str(r, 0);
    v.runtime = rows->Str(r, 1);
    v.compute_type = rows->Str(r, 2);
    v.published_at_ms = rows->Int(r, 3);
    v.price_micro_usd = rows->Int(r, 4);
    ReadBundleColumns(*rows, r, 5, &v);
    v.deprecated = rows->Bool(r, 10);  // after the five bundle columns
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::optional<VersionRecord>> RegistryStore::GetVersion(const std::string& function_id,
                                                               const std::string& version) {
  auto rows = pool_.Exec(
      "SELECT v.runtime, v.compute_type, v.input_schema::text, "
      "array_to_json(v.declared_keys)::text, v.timeout_ms, v.memory_mb, "
      "v.examples::text, " TG_EPOCH_MS(
          "v.published_at") ", v.price_micro_usd, " TG_BUNDLE_COLUMNS
                            ", COALESCE(v.output_schema::text, '') FROM registry.versions "
                            "v " TG_BUNDLE_JOIN "WHERE v.function_id = $1 AND v.version = $2",
      {function_id, version});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<VersionRecord>();
  VersionRecord v;
  v.function_id = function_id;
  v.version = version;
  v.runtime = rows->Str(0, 0);
  v.compute_type = rows->Str(0, 1);
  v.input_schema_json = rows->Str(0, 2);
  v.declared_keys = StringsFromJson(rows->Str(0, 3));
  v.timeout_ms = static_cast<int32_t>(rows->Int(0, 4));
  v.memory_mb = static_cast<int32_t>(rows->Int(0, 5));
  v.examples_json = rows->Str(0, 6);
  v.published_at_ms = rows->Int(0, 7);
  v.price_micro_usd = rows->Int(0, 8);
  ReadBundleColumns(*rows, 0, 9, &v);
  v.output_schema_json = rows->Str(0, 14);  // after the five bundle columns
  return std::optional<VersionRecord>(std::move(v));
}

Result<bool> RegistryStore::HasEqualVersion(const std::string& function_id,
                                            const core::Version& parsed) {
  auto rows = pool_.Exec(
      "SELECT 1 FROM registry.versions WHERE function_id = $1 AND p1 = $2 AND p2 = $3 "
      "AND p3 = $4 AND p4 = $5",
      {function_id, std::to_string(parsed.parts[0]), std::to_string(parsed.parts[1]),
       std::to_string(parsed.parts[2]), std::to_string(parsed.parts[3])});
  if (!rows.ok()) return rows.status();
  return !rows->empty();
}

Result<std::vector<std::string>> RegistryStore::DeleteFunction(const std::string& function_id,
                                                               const std::string& org_id) {
  std::vector<std::string> added_by;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    // The row lock first: a run count recorded meanwhile waits for this transaction, then finds
    // no function and is dropped (AddExecutions joins on functions), instead of a new row
    // referencing the function making its deletion fail.
    auto owned =
        conn.Exec("SELECT 1 FROM registry.functions WHERE id = $1 AND org_id = $2 FOR UPDATE",
                  {function_id, org_id});
    if (!owned.ok()) return owned.status();
    if (owned->empty()) return Status::NotFound("no such function");
    auto adds =
        conn.Exec("DELETE FROM registry.workspace_adds WHERE function_id = $1 RETURNING org_id",
                  {function_id});
    if (!adds.ok()) return adds.status();
    for (int r = 0; r < adds->size(); ++r) added_by.push_back(adds->Str(r, 0));
    // The versions go with the bundles only they publish (the check is on the snapshot before
    // the delete, so the function's own versions are excluded by id).
    auto versions = conn.Exec(
        "WITH gone AS (DELETE FROM registry.versions WHERE function_id = $1 "
        "  RETURNING bundle_digest) "
        "DELETE FROM registry.bundles b WHERE b.digest IN (SELECT bundle_digest FROM gone) "
        "AND NOT EXISTS (SELECT 1 FROM registry.versions v "
        "  WHERE v.bundle_digest = b.digest AND v.function_id <> $1)",
        {function_id});
    if (!versions.ok()) return versions.status();
    for (const char* table :
         {"registry.daily_executions", "registry.daily_latency", "registry.runs",
          "registry.favorites", "registry.ratings", "registry.workspace_env_keys"}) {
      auto gone =
          conn.Exec(std::string("DELETE FROM ") + table + " WHERE function_id = $1", {function_id});
      if (!gone.ok()) return gone.status();
    }
    auto gone = conn.Exec("DELETE FROM registry.functions WHERE id = $1", {function_id});
    return gone.status();
  });
  if (!s.ok()) return s;
  return added_by;
}

Result<WeekStats> RegistryStore::LastWeek(const std::string& function_id) {
  WeekStats stats;
  auto totals = pool_.Exec(
      "SELECT COALESCE(sum(executions), 0), COALESCE(sum(succeeded), 0) "
      "FROM registry.daily_executions WHERE function_id = $1 AND day > current_date - 7",
      {function_id});
  if (!totals.ok()) return totals.status();
  stats.executions = totals->Int(0, 0);
  stats.succeeded = totals->Int(0, 1);
  auto buckets = pool_.Exec(
      "SELECT bucket, sum(n) FROM registry.daily_latency "
      "WHERE function_id = $1 AND day > current_date - 7 GROUP BY bucket",
      {function_id});
  if (!buckets.ok()) return buckets.status();
  for (int r = 0; r < buckets->size(); ++r) {
    int64_t b = buckets->Int(r, 0);
    if (b >= 0 && b < kLatencyBuckets) stats.latency[static_cast<size_t>(b)] = buckets->Int(r, 1);
  }
  return stats;
}

Status RegistryStore::SetWorkspaceEnvKeys(const std::string& org_id, const std::string& function_id,
                                          const std::string& env_keys) {
  auto rows = pool_.Exec(
      "INSERT INTO registry.workspace_env_keys (org_id, function_id, env_keys) "
      "VALUES ($1, $2, $3) ON CONFLICT (org_id, function_id) "
      "DO UPDATE SET env_keys = EXCLUDED.env_keys, updated_at = now()",
      {org_id, function_id, env_keys});
  return rows.status();
}

Result<bool> RegistryStore::ClearWorkspaceEnvKeys(const std::string& org_id,
                                                  const std::string& function_id) {
  auto rows =
      pool_.Exec("DELETE FROM registry.workspace_env_keys WHERE org_id = $1 AND function_id = $2",
                 {org_id, function_id});
  if (!rows.ok()) return rows.status();
  return rows->affected() > 0;
}

Result<std::optional<std::string>> RegistryStore::WorkspaceEnvKeys(const std::string& org_id,
                                                                   const std::string& function_id) {
  auto rows = pool_.Exec(
      "SELECT env_keys FROM registry.workspace_env_keys WHERE org_id = $1 AND function_id = $2",
      {org_id, function_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows->Str(0, 0));
}

Result<VersionRecord> RegistryStore::InsertVersion(const std::string& function_id,
                                                   const VersionDraft& d) {
  int64_t published_at_ms = 0;
  int64_t price = 0;
  pg::Param own_price =
      d.price_micro_usd ? pg::Param(std::to_string(*d.price_micro_usd)) : std::nullopt;
  const bool is_bundle = !d.bundle.empty();
  pg::Param digest = is_bundle ? pg::Param(d.bundle_info.digest) : std::nullopt;
  pg::Param handler = is_bundle ? pg::Param(d.handler) : std::nullopt;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    if (is_bundle) {
      // Stored once per digest: the same archive published again (by any function) reuses the
      // row. Bytes cross libpq as base64 text, which decode() turns back into bytea.
      auto stored = conn.Exec(
          "INSERT INTO registry.bundles (digest, bytes, size_bytes, unpacked_bytes, files) "
          "VALUES ($1, decode($2, 'base64'), $3, $4, $5) ON CONFLICT (digest) DO NOTHING",
          {d.bundle_info.digest, Base64Encode(d.bundle), std::to_string(d.bundle_info.size_bytes),
           std::to_string(d.bundle_info.unpacked_bytes), std::to_string(d.bundle_info.files)});
      if (!stored.ok()) return stored.status();
    }
    // Without a price of its own, the version takes the function's price of now, for good.
    auto rows = conn.Exec(
        "INSERT INTO registry.versions (function_id, version, p1, p2, p3, p4, runtime, "
        "compute_type, code, input_schema, declared_keys, timeout_ms, memory_mb, examples, "
        "price_micro_usd, egress, bundle_digest, handler, output_schema) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::json, "
        "ARRAY(SELECT jsonb_array_elements_text($11::jsonb)), $12, $13, $14::json, "
        "COALESCE($15::bigint, (SELECT price_micro_usd FROM registry.functions WHERE id = $1)), "
        "ARRAY(SELECT jsonb_array_elements_text($16::jsonb)), $17, $18, NULLIF($19, '')::json) "
        "RETURNING " TG_EPOCH_MS("published_at") ", price_micro_usd",
        {function_id, d.version, std::to_string(d.parsed.parts[0]),
         std::to_string(d.parsed.parts[1]), std::to_string(d.parsed.parts[2]),
         std::to_string(d.parsed.parts[3]), d.runtime, d.compute_type, d.code, d.input_schema_json,
         ToJsonArray(d.declared_keys), std::to_string(d.timeout_ms), std::to_string(d.memory_mb),
         d.examples_json, own_price, ToJsonArray(d.egress), digest, handler, d.output_schema_json});
    if (!rows.ok()) return rows.status();
    published_at_ms = rows->Int(0, 0);
    price = rows->Int(0, 1);
    auto touched =
        conn.Exec("UPDATE registry.functions SET updated_at = now() WHERE id = $1", {function_id});
    return touched.status();
  });
  if (!s.ok()) return s;
  VersionRecord v;
  v.function_id = function_id;
  v.version = d.version;
  v.runtime = d.runtime;
  v.compute_type = d.compute_type;
  v.input_schema_json = d.input_schema_json;
  v.output_schema_json = d.output_schema_json;
  v.declared_keys = d.declared_keys;
  v.timeout_ms = d.timeout_ms;
  v.memory_mb = d.memory_mb;
  v.examples_json = d.examples_json;
  v.published_at_ms = published_at_ms;
  v.price_micro_usd = price;
  v.egress = d.egress;
  if (is_bundle) {
    v.handler = d.handler;
    v.bundle_digest = d.bundle_info.digest;
    v.bundle_size_bytes = static_cast<int64_t>(d.bundle_info.size_bytes);
    v.bundle_files = d.bundle_info.files;
  }
  return v;
}

Result<std::optional<VersionCode>> RegistryStore::LoadCode(const std::string& function_id,
                                                           const std::string& version) {
  if (!IsUuid(function_id)) return std::optional<VersionCode>();
  // PostgreSQL's base64 breaks lines every 76 characters; Base64Decode takes none.
  auto rows = pool_.Exec(
      "SELECT v.code, v.bundle_digest, translate(encode(b.bytes, 'base64'), E'\\n', '') "
      "FROM registry.versions v " TG_BUNDLE_JOIN "WHERE v.function_id = $1 AND v.version = $2",
      {function_id, version});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<VersionCode>();
  VersionCode out;
  out.code = rows->Str(0, 0);
  if (!rows->IsNull(0, 1)) {
    out.bundle_digest = rows->Str(0, 1);
    if (!Base64Decode(rows->Str(0, 2), &out.bundle)) {
      return Status::Internal("registry.bundles holds an undecodable bundle " + out.bundle_digest);
    }
  }
  return std::optional<VersionCode>(std::move(out));
}

Result<int64_t> RegistryStore::AddToWorkspace(const std::string& org_id,
                                              const std::string& function_id) {
  auto rows = pool_.Exec(
      "INSERT INTO registry.workspace_adds (org_id, function_id) VALUES ($1, $2) "
      "RETURNING " TG_EPOCH_MS("created_at"),
      {org_id, function_id});
  if (!rows.ok()) return rows.status();
  return rows->Int(0, 0);
}

Result<bool> RegistryStore::RemoveFromWorkspace(const std::string& org_id,
                                                const std::string& function_id) {
  if (!IsUuid(function_id)) return false;
  auto rows =
      pool_.Exec("DELETE FROM registry.workspace_adds WHERE org_id = $1 AND function_id = $2",
                 {org_id, function_id});
  if (!rows.ok()) return rows.status();
  return rows->affected() > 0;
}

Result<std::vector<FunctionSummary>> RegistryStore::ListOwned(const std::string& org_id) {
  auto rows = pool_.Exec(
      std::string(kSummarySelect) + "WHERE f.org_id = $1 ORDER BY f.created_at, f.id", {org_id});
  if (!rows.ok()) return rows.status();
  return ReadSummaries(*rows);
}

Result<std::vector<FunctionSummary>> RegistryStore::ListAdded(const std::string& org_id) {
  // A function made private after it was added no longer shows: its owner withdrew it.
  auto rows = pool_.Exec(std::string(kSummarySelect) +
                             "JOIN registry.workspace_adds a ON a.function_id = f.id "
                             "WHERE a.org_id = $1 AND f.org_id <> $1 AND f.visibility = 'public' "
                             "ORDER BY a.created_at, f.id",
                         {org_id});
  if (!rows.ok()) return rows.status();
  return ReadSummaries(*rows);
}

Status RegistryStore::AddExecutions(const ExecutionCounter::Counts& counts) {
  JsonWriter batch;
  batch.BeginArray();
  bool any = false;
  for (const auto& [key, tally] : counts) {
    if (!IsUuid(key.function_id)) continue;
    any = true;
    batch.BeginObject()
        .Field("f", NormalizeFunctionId(key.function_id))
        .Field("o", key.caller_org_id)
        .Field("d", key.day)
        .Field("n", tally.executions)
        .Field("s", tally.succeeded);
    batch.Key("l").BeginArray();
    for (int64_t n : tally.latency) batch.Int(n);
    batch.EndArray().EndObject();
  }
  batch.EndArray();
  if (!any) return Status::Ok();
  const pg::Params params = {batch.Take()};
  // Rows for functions that do not exist are dropped by the joins, so one stray id cannot
  // fail the batch (and so every later batch) on a foreign key.
  constexpr const char* kBatch =
      "jsonb_to_recordset($1::jsonb) AS c(f uuid, o text, d integer, n bigint, s bigint, l jsonb) "
      "JOIN registry.functions fn ON fn.id = c.f ";
  return pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto totals =
        conn.Exec(std::string("UPDATE registry.functions f SET executions = f.executions + t.n "
                              "FROM (SELECT c.f, sum(c.n) AS n FROM ") +
                      kBatch + "GROUP BY c.f) t WHERE f.id = t.f",
                  params);
    if (!totals.ok()) return totals.status();
    auto daily = conn.Exec(
        std::string("INSERT INTO registry.daily_executions (function_id, day, executions, "
                    "succeeded) SELECT c.f, DATE '1970-01-01' + c.d, sum(c.n), sum(c.s) FROM ") +
            kBatch +
            "GROUP BY c.f, c.d ON CONFLICT (function_id, day) DO UPDATE "
            "SET executions = registry.daily_executions.executions + EXCLUDED.executions, "
            "succeeded = registry.daily_executions.succeeded + EXCLUDED.succeeded",
        params);
    if (!daily.ok()) return daily.status();
    auto latency = conn.Exec(
        std::string("INSERT INTO registry.daily_latency (function_id, day, bucket, n) "
                    "SELECT c.f, DATE '1970-01-01' + c.d, (b.i - 1)::smallint, sum(b.v::bigint) "
                    "FROM ") +
            kBatch +
            "CROSS JOIN LATERAL jsonb_array_elements_text(c.l) WITH ORDINALITY AS b(v, i) "
            "WHERE b.v::bigint > 0 GROUP BY c.f, c.d, b.i "
            "ON CONFLICT (function_id, day, bucket) DO UPDATE "
            "SET n = registry.daily_latency.n + EXCLUDED.n",
        params);
    if (!latency.ok()) return latency.status();
    auto runs = conn.Exec(
        std::string("INSERT INTO registry.runs (org_id, function_id, executions) "
                    "SELECT c.o, c.f, sum(c.n) FROM ") +
            kBatch +
            "WHERE c.o <> '' GROUP BY c.o, c.f ON CONFLICT (org_id, function_id) DO UPDATE "
            "SET executions = registry.runs.executions + EXCLUDED.executions, "
            "last_run_at = now()",
        params);
    return runs.status();
  });
}

Result<std::optional<CachedFunction>> RegistryStore::LoadFunction(const std::string& function_id) {
  if (!IsUuid(function_id)) return std::optional<CachedFunction>();
  auto rows = pool_.Exec(
      "SELECT f.id::text, f.org_id, f.visibility, f.price_micro_usd, f.mcp, v.version, "
      "v.runtime, v.compute_type, v.timeout_ms, v.memory_mb, "
      "array_to_json(v.declared_keys)::text, v.input_schema::text, v.price_micro_usd, "
      "array_to_json(v.egress)::text, v.bundle_digest, v.handler, f.name "
      "FROM registry.functions f LEFT JOIN registry.versions v ON v.function_id = f.id "
      "WHERE f.id = $1",
      {function_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<CachedFunction>();
  CachedFunction f;
  f.function_id = rows->Str(0, 0);
  f.org_id = rows->Str(0, 1);
  f.is_public = rows->Str(0, 2) == "public";
  f.price_micro_usd = rows->Int(0, 3);
  f.mcp = rows->Bool(0, 4);
  f.name = rows->Str(0, 16);
  for (int r = 0; r < rows->size(); ++r) {
    if (rows->IsNull(r, 5)) continue;  // no version published yet
    PublishedVersion v;
    v.version = rows->Str(r, 5);
    auto parsed = core::ParseVersion(v.version);
    if (!parsed) return Status::Internal("registry.versions holds a bad version " + v.version);
    v.parsed = *parsed;
    v.runtime = rows->Str(r, 6);
    v.compute_type = rows->Str(r, 7);
    v.timeout_ms = static_cast<int32_t>(rows->Int(r, 8));
    v.memory_mb = static_cast<int32_t>(rows->Int(r, 9));
    v.declared_keys = StringsFromJson(rows->Str(r, 10));
    auto schema = core::JsonSchema::Compile(rows->Str(r, 11));
    if (schema.ok()) {
      v.input_schema = std::move(*schema);
      v.input_schema_json = rows->Str(r, 11);
    } else {
      // Published before schemas were checked: such a version keeps accepting any event.
      log::Warn("a version's input_schema is not one Toolgate can check; events go unchecked")
          .Str("function_id", f.function_id)
          .Str("version", v.version)
          .Str("error", schema.status().message());
    }
    v.price_micro_usd = rows->Int(r, 12);
    v.egress = StringsFromJson(rows->Str(r, 13));
    if (!rows->IsNull(r, 14)) {
      v.bundle_digest = rows->Str(r, 14);
      v.handler = rows->Str(r, 15);
    }
    f.versions.push_back(std::move(v));
  }
  return std::optional<CachedFunction>(std::move(f));
}

Result<std::unordered_set<std::string>> RegistryStore::LoadAdded(const std::string& org_id) {
  auto rows = pool_.Exec("SELECT function_id::text FROM registry.workspace_adds WHERE org_id = $1",
                         {org_id});
  if (!rows.ok()) return rows.status();
  std::unordered_set<std::string> out;
  for (int r = 0; r < rows->size(); ++r) out.insert(rows->Str(r, 0));
  return out;
}

}  // namespace toolgate::registry
