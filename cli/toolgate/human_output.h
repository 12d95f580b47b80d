// What the CLI prints without --json: the server's JSON turned into text for people. Lists
// become tables with chosen columns, single objects aligned "name  value" lines. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolgate::cli {

// One column of a table: its heading, and where its cells come from in each item: a member
// name, or a dotted path into nested objects ("cost.total_micro_usd").
struct Column {
  std::string_view heading;
  std::string_view path;
};

// A table view of an API answer: the array member holding the rows ("items" for every paged
// list) and the columns to show.
struct TableView {
  std::string_view rows = "items";
  std::vector<Column> columns;
};

// The text of one JSON value in a cell or a field: strings as they are, null and [] as "-",
// arrays of strings joined by ", ", anything else as compact JSON.
std::string CellText(std::string_view json_value);

// A table: the headings, then one line per element of rows_json (a JSON array of objects); each
// column as wide as its widest cell, two spaces between columns, no trailing blanks. A missing
// member is "-". "(none)" for an empty array. Ends with a newline.
std::string RenderTable(std::string_view rows_json, const std::vector<Column>& columns);

// An object as "name  value" lines, names padded to one width; members of a nested object whose
// own members are all scalars or arrays as "outer.inner", deeper objects as compact JSON; an array
// of objects as its own indented table (columns: the first element's members that are not objects
// or arrays); a string with line breaks indented below its name. Ends with a newline; "" for text
// that is not a JSON object.
std::string RenderFields(std::string_view object_json);

// micro-USD as dollars: 2500 -> "$0.0025", 5000000 -> "$5.00", -1 -> "-$0.000001" (two to six
// decimals).
std::string UsdText(int64_t micro_usd);

// A spending-limits answer (GET /billing/budget, /api-keys/{id}/budget) as two lines, e.g.
//   daily    $5.00 limit, $1.20 spent today (24 %)
//   monthly  no limit, $3.40 spent this month
// (a limit reached reads "(100 %, reached)"). RenderFields for text that is not such an answer.
std::string RenderBudget(std::string_view budget_json);

// The human text of a whole answer: when it is an object whose view.rows member is an array and
// view has columns, that table, followed by "more: --cursor C" when next_cursor is set;
// otherwise RenderFields. Text that is not JSON comes back unchanged.
std::string RenderHuman(std::string_view body, const TableView& view);

}  // namespace toolgate::cli
