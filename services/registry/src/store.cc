#include "toolgate/registry/store.h"

#include "RegistryMigrations.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

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

std::vector<std::string> FromJsonArray(const std::string& text) {
  std::vector<std::string> out;
  auto doc = ParseJson(text);
  simdjson::dom::array items;
  if (!doc.ok() || doc->root.get_array().get(items) != simdjson::SUCCESS) return out;
  for (auto item : items) {
    std::string_view s;
    if (item.get_string().get(s) == simdjson::SUCCESS) out.emplace_back(s);
  }
  return out;
}

// Timestamps are read as epoch milliseconds; the views format them (RFC 3339).
#define TG_EPOCH_MS(column) "floor(extract(epoch FROM " column ") * 1000)::bigint"

constexpr const char* kFunctionColumns =
    "id::text, org_id, org_name, name, description, overview, category, sector, "
    "array_to_json(tags)::text, visibility, price_micro_usd, mcp, executions, "
    "floor(extract(epoch FROM created_at) * 1000)::bigint, "
    "floor(extract(epoch FROM updated_at) * 1000)::bigint";

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
  f.tags = FromJsonArray(rows.Str(r, 8));
  f.visibility = rows.Str(r, 9);
  f.price_micro_usd = rows.Int(r, 10);
  f.mcp = rows.Bool(r, 11);
  f.executions = rows.Int(r, 12);
  f.created_at_ms = rows.Int(r, 13);
  f.updated_at_ms = rows.Int(r, 14);
  return f;
}

pg::Param Opt(const std::optional<std::string>& v) {
  return v ? pg::Param(*v) : std::nullopt;
}

constexpr const char* kSummarySelect =
    "SELECT f.id::text, f.name, f.description, f.org_id, f.org_name, v.version, v.runtime, "
    "v.compute_type, f.price_micro_usd, f.visibility, f.mcp "
    "FROM registry.functions f "
    "LEFT JOIN LATERAL (SELECT version, runtime, compute_type FROM registry.versions "
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

}  // namespace

Status RegistryStore::Migrate() {
  return pg::Migrate(pool_, "registry", RegistryMigrations());
}

Result<FunctionRecord> RegistryStore::CreateFunction(const FunctionFields& f,
                                                     const v1::Principal& owner) {
  auto rows = pool_.Exec(
      std::string("INSERT INTO registry.functions (id, org_id, org_name, name, description, "
                  "overview, category, sector, tags, visibility, price_micro_usd, mcp) "
                  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                  "ARRAY(SELECT jsonb_array_elements_text($9::jsonb)), $10, $11, $12) "
                  "RETURNING ") +
          kFunctionColumns,
      {NewUuid(), owner.org_id(), owner.org_name(), *f.name, *f.description, *f.overview,
       *f.category, *f.sector, ToJsonArray(*f.tags), *f.visibility,
       std::to_string(*f.price_micro_usd), *f.mcp ? "true" : "false"});
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
                  "mcp = COALESCE($11::boolean, mcp), updated_at = now() "
                  "WHERE id = $1 AND org_id = $2 RETURNING ") +
          kFunctionColumns,
      {id, org_id, Opt(f.name), Opt(f.description), Opt(f.overview), Opt(f.category), Opt(f.sector),
       tags, Opt(f.visibility), price, mcp});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::NotFound("no such function");
  return ReadFunction(*rows, 0);
}

Result<std::vector<VersionRecord>> RegistryStore::ListVersions(const std::string& function_id) {
  auto rows = pool_.Exec(
      "SELECT version, runtime, compute_type, " TG_EPOCH_MS("published_at") " "
      "FROM registry.versions WHERE function_id = $1 "
      "ORDER BY p1 DESC, p2 DESC, p3 DESC, p4 DESC",
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
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::optional<VersionRecord>> RegistryStore::GetVersion(const std::string& function_id,
                                                               const std::string& version) {
  auto rows = pool_.Exec(
      "SELECT runtime, compute_type, input_schema::text, array_to_json(declared_keys)::text, "
      "timeout_ms, memory_mb, examples::text, " TG_EPOCH_MS("published_at") " "
      "FROM registry.versions WHERE function_id = $1 AND version = $2",
      {function_id, version});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<VersionRecord>();
  VersionRecord v;
  v.function_id = function_id;
  v.version = version;
  v.runtime = rows->Str(0, 0);
  v.compute_type = rows->Str(0, 1);
  v.input_schema_json = rows->Str(0, 2);
  v.declared_keys = FromJsonArray(rows->Str(0, 3));
  v.timeout_ms = static_cast<int32_t>(rows->Int(0, 4));
  v.memory_mb = static_cast<int32_t>(rows->Int(0, 5));
  v.examples_json = rows->Str(0, 6);
  v.published_at_ms = rows->Int(0, 7);
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

Result<VersionRecord> RegistryStore::InsertVersion(const std::string& function_id,
                                                   const VersionDraft& d) {
  int64_t published_at_ms = 0;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto rows = conn.Exec(
        "INSERT INTO registry.versions (function_id, version, p1, p2, p3, p4, runtime, "
        "compute_type, code, input_schema, declared_keys, timeout_ms, memory_mb, examples) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::json, "
        "ARRAY(SELECT jsonb_array_elements_text($11::jsonb)), $12, $13, $14::json) "
        "RETURNING " TG_EPOCH_MS("published_at"),
        {function_id, d.version, std::to_string(d.parsed.parts[0]),
         std::to_string(d.parsed.parts[1]), std::to_string(d.parsed.parts[2]),
         std::to_string(d.parsed.parts[3]), d.runtime, d.compute_type, d.code, d.input_schema_json,
         ToJsonArray(d.declared_keys), std::to_string(d.timeout_ms), std::to_string(d.memory_mb),
         d.examples_json});
    if (!rows.ok()) return rows.status();
    published_at_ms = rows->Int(0, 0);
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
  v.declared_keys = d.declared_keys;
  v.timeout_ms = d.timeout_ms;
  v.memory_mb = d.memory_mb;
  v.examples_json = d.examples_json;
  v.published_at_ms = published_at_ms;
  return v;
}

Result<std::optional<std::string>> RegistryStore::LoadCode(const std::string& function_id,
                                                           const std::string& version) {
  if (!IsUuid(function_id)) return std::optional<std::string>();
  auto rows =
      pool_.Exec("SELECT code FROM registry.versions WHERE function_id = $1 AND version = $2",
                 {function_id, version});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows->Str(0, 0));
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

Status RegistryStore::AddExecutions(const std::unordered_map<std::string, int64_t>& counts) {
  // UUIDs and integers need no quoting inside a PostgreSQL array literal.
  std::string ids = "{", ns = "{";
  for (const auto& [id, n] : counts) {
    if (!IsUuid(id)) continue;
    if (ids.size() > 1) {
      ids += ',';
      ns += ',';
    }
    ids += NormalizeFunctionId(id);
    ns += std::to_string(n);
  }
  if (ids.size() == 1) return Status::Ok();
  ids += '}';
  ns += '}';
  auto rows = pool_.Exec(
      "UPDATE registry.functions f SET executions = f.executions + c.n "
      "FROM unnest($1::uuid[], $2::bigint[]) AS c(id, n) WHERE f.id = c.id",
      {ids, ns});
  return rows.status();
}

Result<std::optional<CachedFunction>> RegistryStore::LoadFunction(const std::string& function_id) {
  if (!IsUuid(function_id)) return std::optional<CachedFunction>();
  auto rows = pool_.Exec(
      "SELECT f.id::text, f.org_id, f.visibility, f.price_micro_usd, f.mcp, v.version, "
      "v.runtime, v.compute_type, v.timeout_ms, v.memory_mb, "
      "array_to_json(v.declared_keys)::text "
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
    v.declared_keys = FromJsonArray(rows->Str(r, 10));
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
