#include "human_output.h"

#include <algorithm>

#include "toolgate/base/json.h"

namespace toolgate::cli {
namespace {

std::string ElementText(simdjson::dom::element e) {
  if (e.is_null()) return "-";
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  simdjson::dom::array arr;
  if (e.get_array().get(arr) == simdjson::SUCCESS) {
    if (arr.size() == 0) return "-";
    std::string joined;
    for (simdjson::dom::element item : arr) {
      if (!item.is_string()) return ToJson(e);
      if (!joined.empty()) joined += ", ";
      joined += std::string(std::string_view(item));
    }
    return joined;
  }
  return ToJson(e);
}

// The element at a dotted path, or an error when some step is missing.
simdjson::simdjson_result<simdjson::dom::element> AtPath(simdjson::dom::element e,
                                                         std::string_view path) {
  while (true) {
    size_t dot = path.find('.');
    auto next = e[path.substr(0, dot)];
    if (dot == std::string_view::npos || next.error()) return next;
    e = next.value_unsafe();
    path.remove_prefix(dot + 1);
  }
}

// Cells are one line each: a line break inside one would break the table's rows apart.
std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

std::string Table(simdjson::dom::array rows, const std::vector<Column>& columns,
                  std::string_view indent) {
  if (rows.size() == 0) return std::string(indent) + "(none)\n";
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> widths;
  cells.emplace_back();
  for (const Column& c : columns) {
    cells.back().emplace_back(c.heading);
    widths.push_back(c.heading.size());
  }
  for (simdjson::dom::element row : rows) {
    cells.emplace_back();
    for (size_t i = 0; i < columns.size(); ++i) {
      auto value = AtPath(row, columns[i].path);
      std::string text = value.error() ? "-" : OneLine(ElementText(value.value_unsafe()));
      widths[i] = std::max(widths[i], text.size());
      cells.back().push_back(std::move(text));
    }
  }
  std::string out;
  for (const auto& line : cells) {
    std::string text(indent);
    for (size_t i = 0; i < line.size(); ++i) {
      text += line[i];
      if (i + 1 < line.size()) text.append(widths[i] - line[i].size() + 2, ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

struct FieldLine {
  std::string name;
  std::string value;  // for a scalar
  std::string block;  // for a table or a multi-line string, printed below the name
};

bool IsFlat(simdjson::dom::object obj) {
  for (auto member : obj) {
    if (member.value.is_object() || member.value.is_array()) return false;
  }
  return true;
}

// A record with lists (an execution's callback: url, outcome, attempts): scalars and arrays
// only, and at least one array.
bool IsFlatWithArrays(simdjson::dom::object obj) {
  bool arrays = false;
  for (auto member : obj) {
    if (member.value.is_object()) return false;
    arrays |= member.value.is_array();
  }
  return arrays;
}

void CollectFields(simdjson::dom::object obj, const std::string& prefix,
                   std::vector<FieldLine>* out) {
  for (auto [key, value] : obj) {
    std::string name = prefix + std::string(key);
    simdjson::dom::object nested;
    simdjson::dom::array arr;
    // A small record (rating, cost, last_7_days) reads best as "outer.inner" lines, its lists
    // as they would at the top (a table for objects); anything deeper (an input schema's
    // properties) as one line of JSON.
    if (value.get_object().get(nested) == simdjson::SUCCESS && nested.size() > 0 &&
        (IsFlat(nested) || IsFlatWithArrays(nested))) {
      CollectFields(nested, name + ".", out);
      continue;
    }
    simdjson::dom::object first;
    if (value.get_array().get(arr) == simdjson::SUCCESS && arr.size() > 0 &&
        arr.at(0).get_object().get(first) == simdjson::SUCCESS) {
      std::vector<Column> columns;
      for (auto [member, member_value] : first) {
        if (!member_value.is_object() && !member_value.is_array()) {
          columns.push_back({member, member});
        }
      }
      out->push_back({name, "", Table(arr, columns, "  ")});
      continue;
    }
    std::string text = ElementText(value);
    if (text.find('\n') != std::string::npos) {
      std::string block;
      size_t start = 0;
      while (start < text.size()) {
        size_t end = std::min(text.find('\n', start), text.size());
        block += "  " + text.substr(start, end - start) + "\n";
        start = end + 1;
      }
      out->push_back({name, "", block});
      continue;
    }
    out->push_back({name, text, ""});
  }
}

}  // namespace

std::string CellText(std::string_view json_value) {
  auto doc = ParseJson(json_value);
  if (!doc.ok()) return std::string(json_value);
  return ElementText(doc->root);
}

std::string RenderTable(std::string_view rows_json, const std::vector<Column>& columns) {
  auto doc = ParseJson(rows_json);
  simdjson::dom::array rows;
  if (!doc.ok() || doc->root.get_array().get(rows) != simdjson::SUCCESS) return "";
  return Table(rows, columns, "");
}

std::string RenderFields(std::string_view object_json) {
  auto doc = ParseJson(object_json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) return "";
  std::vector<FieldLine> lines;
  CollectFields(obj, "", &lines);
  size_t width = 0;
  for (const auto& line : lines) {
    if (line.block.empty()) width = std::max(width, line.name.size());
  }
  std::string out;
  for (const auto& line : lines) {
    if (!line.block.empty()) {
      out += line.name + ":\n" + line.block;
      continue;
    }
    out += line.name;
    out.append(width - line.name.size() + 2, ' ');
    out += line.value + "\n";
  }
  return out;
}

std::string UsdText(int64_t micro_usd) {
  const std::string sign = micro_usd < 0 ? "-" : "";
  // Unsigned, so that the most negative amount has a magnitude too.
  const uint64_t magnitude =
      micro_usd < 0 ? 0 - static_cast<uint64_t>(micro_usd) : static_cast<uint64_t>(micro_usd);
  std::string fraction = std::to_string(magnitude % 1'000'000);
  fraction.insert(0, 6 - fraction.size(), '0');
  while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
  return sign + "$" + std::to_string(magnitude / 1'000'000) + "." + fraction;
}

std::string RenderBudget(std::string_view budget_json) {
  auto doc = ParseJson(budget_json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return RenderFields(budget_json);
  }
  struct Period {
    const char* name;
    const char* limit;
    const char* spent;
    const char* spent_words;
  };
  std::string out;
  for (const Period& p :
       {Period{"daily  ", "daily_micro_usd", "spent_today_micro_usd", "today"},
        Period{"monthly", "monthly_micro_usd", "spent_this_month_micro_usd", "this month"}}) {
    int64_t limit = 0;
    int64_t spent = 0;
    const Field has_limit = GetInt(obj, p.limit, &limit);
    if (has_limit == Field::kWrongType || GetInt(obj, p.spent, &spent) != Field::kOk) {
      return RenderFields(budget_json);
    }
    out += std::string(p.name) + "  ";
    if (has_limit == Field::kOk && limit > 0) {
      // Whole percent, rounded down, in integers: 79.99 % is not yet the 80 % warning.
      const auto percent =
          static_cast<int64_t>(static_cast<__int128>(std::max<int64_t>(spent, 0)) * 100 / limit);
      out += UsdText(limit) + " limit, " + UsdText(spent) + " spent " + p.spent_words + " (" +
             std::to_string(percent) + " %" + (spent >= limit ? ", reached" : "") + ")\n";
    } else {
      out += "no limit, " + UsdText(spent) + " spent " + p.spent_words + "\n";
    }
  }
  return out;
}

std::string RenderHuman(std::string_view body, const TableView& view) {
  auto doc = ParseJson(body);
  if (!doc.ok()) return std::string(body);
  simdjson::dom::object obj;
  simdjson::dom::array rows;
  if (!view.columns.empty() && doc->root.get_object().get(obj) == simdjson::SUCCESS &&
      obj[view.rows].get_array().get(rows) == simdjson::SUCCESS) {
    std::string out = Table(rows, view.columns, "");
    std::string cursor;
    if (GetString(obj, "next_cursor", &cursor) == Field::kOk && !cursor.empty()) {
      out += "more: --cursor " + cursor + "\n";
    }
    return out;
  }
  if (doc->root.is_object()) return RenderFields(body);
  return ElementText(doc->root) + "\n";
}

}  // namespace toolgate::cli
