#include "toolgate/registry/marketplace_views.h"

#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"

namespace toolgate::registry {
namespace {

void WriteCard(JsonWriter& w, const Card& c) {
  w.BeginObject()
      .Field("function_id", c.function_id)
      .Field("name", c.name)
      .Field("description", c.description)
      .Key("organization")
      .BeginObject()
      .Field("id", c.org_id)
      .Field("name", c.org_name)
      .EndObject()
      .Field("category", c.category)
      .Field("sector", c.sector)
      .Key("tags")
      .BeginArray();
  for (const auto& t : c.tags) w.String(t);
  w.EndArray()
      .FieldOrNull("runtime", c.runtime)
      .FieldOrNull("compute_type", c.compute_type)
      .Key("egress")
      .BeginArray();
  for (const auto& e : c.egress) w.String(e);
  w.EndArray()
      .Field("price_micro_usd", c.price_micro_usd)
      .Key("rating")
      .BeginObject()
      .Key("average")
      .Raw(FormatAverage(c.rating_sum, c.rating_count))
      .Field("count", c.rating_count)
      .EndObject()
      .Field("executions", c.executions)
      .Field("mcp", c.mcp)
      .Field("favorite", c.favorite)
      .EndObject();
}

void WriteCards(JsonWriter& w, const std::vector<Card>& cards) {
  w.BeginArray();
  for (const auto& c : cards) WriteCard(w, c);
  w.EndArray();
}

void WriteNext(JsonWriter& w, const std::optional<std::string>& next) {
  w.Key("next_cursor");
  if (next) {
    w.String(*next);
  } else {
    w.Null();
  }
}

void WriteRating(JsonWriter& w, const RatingRecord& r, const std::string& viewer_user_id) {
  w.BeginObject().Field("stars", r.stars).Field("review", r.review);
  if (!viewer_user_id.empty() && r.user_id == viewer_user_id) {
    w.Key("user").BeginObject().Field("id", r.user_id).EndObject();
  }
  w.Key("organization")
      .BeginObject()
      .Field("name", r.org_name)
      .EndObject()
      .Field("created_at", FormatRfc3339(r.created_at_ms))
      .Field("updated_at", FormatRfc3339(r.updated_at_ms))
      .EndObject();
}

}  // namespace

std::string CardJson(const Card& card) {
  JsonWriter w;
  WriteCard(w, card);
  return w.Take();
}

std::string CardListJson(const std::vector<Card>& cards, const std::optional<std::string>& next,
                         std::optional<int64_t> total) {
  JsonWriter w;
  w.BeginObject().Key("items");
  WriteCards(w, cards);
  WriteNext(w, next);
  if (total) w.Field("total", *total);
  w.EndObject();
  return w.Take();
}

std::string HighlightsJson(const std::vector<Card>& trending, const std::vector<Card>& top_rated) {
  JsonWriter w;
  w.BeginObject().Key("trending");
  WriteCards(w, trending);
  w.Key("top_rated");
  WriteCards(w, top_rated);
  w.EndObject();
  return w.Take();
}

std::string FacetsJson(const Facets& f) {
  JsonWriter w;
  w.BeginObject();
  struct Named {
    const char* key;
    const std::vector<FacetCount>* values;
  };
  for (const Named& n :
       {Named{"category", &f.category}, Named{"sector", &f.sector}, Named{"runtime", &f.runtime},
        Named{"compute_type", &f.compute_type}, Named{"tags", &f.tags},
        Named{"creator", &f.creator}, Named{"pricing", &f.pricing}}) {
    const bool named = n.values == &f.creator;
    w.Key(n.key).BeginArray();
    for (const auto& v : *n.values) {
      w.BeginObject().Field("value", v.value);
      if (named) w.Field("name", v.label);
      w.Field("count", v.count).EndObject();
    }
    w.EndArray();
  }
  w.Field("total", f.total).EndObject();
  return w.Take();
}

std::string RatingJson(const RatingRecord& rating, const std::string& viewer_user_id) {
  JsonWriter w;
  WriteRating(w, rating, viewer_user_id);
  return w.Take();
}

std::string RatingListJson(const std::vector<RatingRecord>& ratings,
                           const std::optional<std::string>& next,
                           const std::string& viewer_user_id) {
  JsonWriter w;
  w.BeginObject().Key("items").BeginArray();
  for (const auto& r : ratings) WriteRating(w, r, viewer_user_id);
  w.EndArray();
  WriteNext(w, next);
  w.EndObject();
  return w.Take();
}

std::string SnippetsJson(const Snippets& s) {
  JsonWriter w;
  w.BeginObject()
      .Field("curl", s.curl)
      .Field("python", s.python)
      .Field("javascript", s.javascript)
      .EndObject();
  return w.Take();
}

}  // namespace toolgate::registry
