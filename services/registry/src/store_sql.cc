#include "store_sql.h"

#include "toolgate/base/json.h"

namespace toolgate::registry {

std::string CardColumns(std::string_view viewer_param) {
  return "f.id::text, f.name, f.description, f.org_id, f.org_name, f.category, f.sector, "
         "array_to_json(f.tags)::text, v.runtime, v.compute_type, "
         "COALESCE(v.price_micro_usd, f.price_micro_usd), "
         "f.rating_sum, f.rating_count, f.executions, f.mcp, "
         "EXISTS (SELECT 1 FROM registry.favorites fv WHERE fv.user_id = " +
         std::string(viewer_param) + " AND fv.function_id = f.id), array_to_json(v.egress)::text";
}

Card ReadCard(const pg::Rows& rows, int r) {
  Card c;
  c.function_id = rows.Str(r, 0);
  c.name = rows.Str(r, 1);
  c.description = rows.Str(r, 2);
  c.org_id = rows.Str(r, 3);
  c.org_name = rows.Str(r, 4);
  c.category = rows.Str(r, 5);
  c.sector = rows.Str(r, 6);
  c.tags = StringsFromJson(rows.Str(r, 7));
  if (!rows.IsNull(r, 8)) {
    c.runtime = rows.Str(r, 8);
    c.compute_type = rows.Str(r, 9);
  }
  c.price_micro_usd = rows.Int(r, 10);
  c.rating_sum = rows.Int(r, 11);
  c.rating_count = rows.Int(r, 12);
  c.executions = rows.Int(r, 13);
  c.mcp = rows.Bool(r, 14);
  c.favorite = rows.Bool(r, 15);
  if (!rows.IsNull(r, 16)) c.egress = StringsFromJson(rows.Str(r, 16));
  return c;
}

std::vector<std::string> StringsFromJson(const std::string& text) {
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

}  // namespace toolgate::registry
