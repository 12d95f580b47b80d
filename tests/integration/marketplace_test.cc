// The marketplace API (issue 4) against a real system: search and filters, sorts, pagination,
// facets, highlights, favorites, ratings and snippets.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr const char* kPython = "def service_handler(event, context):\n    return event\n";
constexpr const char* kJavaScript = "function service_handler(event, context) { return event; }\n";
// Answers 200 only when both declared keys reach it.
constexpr const char* kNeedsKeys =
    "function service_handler(event, context)\n"
    "  if context.env.GEO_TOKEN == 'geo-secret' and context.env.MAP_TOKEN == 'map-secret' then\n"
    "    return {statusCode = 200, body = {city = event.city}}\n"
    "  end\n"
    "  return {statusCode = 401, body = {error = 'keys missing'}}\n"
    "end";

std::string Code(const http::HttpResponse& r) {
  return StringField(r.body, "code");
}

http::HttpResponse Must(Result<http::HttpResponse> r) {
  if (!r.ok()) {
    ADD_FAILURE() << "transport failure: " << r.status().ToString();
    return {};
  }
  return *r;
}

// What a test needs of a card.
struct CardView {
  std::string id, name, runtime, compute_type, organization;
  int64_t executions = 0, rating_count = 0, price = 0;
  double rating_average = 0;
  bool favorite = false;
};

struct Page {
  std::vector<CardView> cards;
  std::string next_cursor;  // "" on the last page
  int64_t total = -1;
};

CardView ReadCard(simdjson::dom::element e) {
  CardView c;
  c.id = std::string(std::string_view(e["function_id"]));
  c.name = std::string(std::string_view(e["name"]));
  std::string_view s;
  if (e["runtime"].get(s) == simdjson::SUCCESS) c.runtime = std::string(s);
  if (e["compute_type"].get(s) == simdjson::SUCCESS) c.compute_type = std::string(s);
  c.organization = std::string(std::string_view(e["organization"]["name"]));
  c.executions = int64_t(e["executions"]);
  c.price = int64_t(e["price_micro_usd"]);
  c.rating_count = int64_t(e["rating"]["count"]);
  c.rating_average = double(e["rating"]["average"]);
  c.favorite = bool(e["favorite"]);
  return c;
}

std::vector<CardView> ReadCards(simdjson::dom::element array) {
  std::vector<CardView> out;
  for (auto e : simdjson::dom::array(array)) out.push_back(ReadCard(e));
  return out;
}

Page ReadPage(const http::HttpResponse& r) {
  Page page;
  EXPECT_EQ(r.status, 200) << r.body;
  if (r.status != 200) return page;
  auto doc = Json(r.body);
  page.cards = ReadCards(doc.root["items"]);
  std::string_view next;
  if (doc.root["next_cursor"].get(next) == simdjson::SUCCESS) page.next_cursor = std::string(next);
  int64_t total = 0;
  if (doc.root["total"].get(total) == simdjson::SUCCESS) page.total = total;
  return page;
}

std::vector<std::string> Names(const std::vector<CardView>& cards) {
  std::vector<std::string> out;
  for (const auto& c : cards) out.push_back(c.name);
  return out;
}

std::set<std::string> NameSet(const std::vector<CardView>& cards) {
  auto names = Names(cards);
  return {names.begin(), names.end()};
}

std::string Create(Account& owner, const std::string& name, const std::string& description,
                   const std::string& category, const std::string& sector,
                   const std::string& tags_json, int64_t price, const std::string& overview = "",
                   const std::string& visibility = "public") {
  JsonWriter w;
  w.BeginObject()
      .Field("name", name)
      .Field("description", description)
      .Field("overview", overview)
      .Field("category", category)
      .Field("sector", sector)
      .Field("visibility", visibility)
      .Field("price_micro_usd", price)
      .Key("tags")
      .Raw(tags_json)
      .EndObject();
  auto r = Must(owner.session().Post("/api/v1/functions", w.Take()));
  EXPECT_EQ(r.status, 201) << r.body;
  return StringField(r.body, "function_id");
}

http::HttpResponse Publish(Account& owner, const std::string& id, const std::string& version,
                           const std::string& runtime, const std::string& compute_type,
                           const std::string& code, const std::string& extra_members = "") {
  std::string body = R"({"version":")" + version + R"(","runtime":")" + runtime +
                     R"(","compute_type":")" + compute_type + R"(","code":)" +
                     JsonWriter::Quote(code) + R"(,"input_schema":{"type":"object"})" +
                     (extra_members.empty() ? "" : "," + extra_members) + "}";
  return Must(owner.session().Post("/api/v1/functions/" + id + "/versions", body));
}

void Lua(Account& owner, const std::string& id) {
  EXPECT_EQ(Publish(owner, id, "1.0", "lua", "CPU", kEcho).status, 201);
}

// The marketplace of this suite: two publishers, four callers that run and rate.
class MarketplaceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    alpha_ = new Account(*g_system, "Alpha Tools");
    beta_ = new Account(*g_system, "Beta Labs");
    for (int i = 0; i < 4; ++i) {
      raters_.push_back(new Account(*g_system, "Rater " + std::to_string(i + 1)));
      raters_.back()->TopUp(50'000'000);
      rater_keys_.push_back(raters_.back()->CreateKey());
    }
    alpha_->TopUp(50'000'000);
    alpha_key_ = alpha_->CreateKey();

    geocoder_ = Create(*alpha_, "Geocoder Pro", "Turns street addresses into coordinates.", "Geo",
                       "Logistics", R"(["maps","geo"])", 0);
    Lua(*alpha_, geocoder_);
    // Mentions the geocoder everywhere but in its name.
    route_ = Create(*alpha_, "Route Planner",
                    "Plans routes; a geocoder step turns each address into coordinates, like a "
                    "geocoder should. Geocoder output is cached.",
                    "Geo", "Logistics", R"(["maps","routing","geocoder"])", 1000,
                    "Uses a geocoder. The geocoder handles addresses; geocoder results feed "
                    "the router.");
    Lua(*alpha_, route_);
    invoices_ = Create(*beta_, "Invoice Parser", "Extracts totals and dates from invoices.",
                       "Finance", "Accounting", R"(["pdf","invoices"])", 500);
    Lua(*beta_, invoices_);
    tax_ = Create(*beta_, "Tax Helper", "Computes sales tax for an order.", "Finance", "Accounting",
                  R"(["tax"])", 0);
    Lua(*beta_, tax_);
    // Lua first, then Python: cards and filters follow the latest version.
    stats_ = Create(*alpha_, "Text Stats", "Counts words in a text.", "Text", "",
                    R"(["text","Writing"])", 0);
    Lua(*alpha_, stats_);
    EXPECT_EQ(Publish(*alpha_, stats_, "2.0", "python", "CPU", kPython).status, 201);
    vision_ = Create(*beta_, "Vision Embed", "Image embeddings on GPUs.", "AI", "Media",
                     R"(["gpu","embeddings"])", 20000);
    EXPECT_EQ(Publish(*beta_, vision_, "1.0", "python", "GPU", kPython).status, 201);
    color_ = Create(*alpha_, "Color Tool", "Palettes from one colour.", "Design", "Media",
                    R"(["color"])", 0);
    EXPECT_EQ(Publish(*alpha_, color_, "1.0", "javascript", "CPU", kJavaScript).status, 201);
    // Never listed: private, and public without a published version.
    secret_ = Create(*alpha_, "Geocoder Private", "A private geocoder.", "Geo", "Logistics",
                     R"(["maps"])", 0, "", "private");
    Lua(*alpha_, secret_);
    draft_ = Create(*alpha_, "Geocoder Draft", "Not published yet.", "Geo", "Logistics",
                    R"(["maps"])", 0);

    // Executions: geocoder 4, invoices 4, tax 1, route 2; ratings from the raters who ran them.
    for (size_t i = 0; i < raters_.size(); ++i) Run(i, invoices_, 1);
    Run(0, geocoder_, 3);
    Run(1, geocoder_, 1);
    Run(0, tax_, 1);
    Run(2, route_, 2);
    WaitForExecutions(invoices_, 4);
    WaitForExecutions(geocoder_, 4);
    WaitForExecutions(tax_, 1);
    WaitForExecutions(route_, 2);
    for (size_t i = 0; i < raters_.size(); ++i) Rate(i, invoices_, 4);
    Rate(0, tax_, 5);  // one five-star rating
    Rate(0, geocoder_, 2);
    Rate(1, geocoder_, 3);
  }
  static void TearDownTestSuite() {
    for (Account* a : raters_) delete a;
    raters_.clear();
    rater_keys_.clear();
    delete alpha_;
    delete beta_;
  }

  static void Run(size_t rater, const std::string& id, int times) {
    auto added = Must(raters_[rater]->session().Post("/api/v1/workspace/tools",
                                                     R"({"function_id":")" + id + "\"}"));
    EXPECT_TRUE(added.status == 201 || added.status == 409) << added.body;
    for (int i = 0; i < times; ++i) {
      auto r = Invoke(*g_system, rater_keys_[rater], id, "", R"({"event":{"n":1}})");
      EXPECT_EQ(r.status, 200) << r.body;
    }
  }

  // The registry counts executions from billing's events, a moment after each call answers;
  // wait (bounded) until it has counted `at_least`.
  static void WaitForExecutions(const std::string& id, int64_t at_least) {
    auto client = g_system->Client();
    int64_t seen = -1;
    auto counted = [&] {
      seen = IntField(Must(client->Get("/api/v1/functions/" + id)).body, "executions");
      return seen >= at_least;
    };
    EXPECT_TRUE(WaitUntil(counted, 20000, "executions of " + id))
        << "they stayed at " << seen << ", expected " << at_least;
  }

  static void Rate(size_t rater, const std::string& id, int stars) {
    auto r = Must(raters_[rater]->session().Put("/api/v1/functions/" + id + "/rating",
                                                R"({"stars":)" + std::to_string(stars) +
                                                    R"(,"review":"stars )" + std::to_string(stars) +
                                                    R"("})"));
    EXPECT_EQ(r.status, 201) << r.body;
  }

  // GET /api/v1/marketplace?query as the public (no credentials).
  static Page Market(const std::string& query) {
    auto client = g_system->Client();
    return ReadPage(Must(client->Get("/api/v1/marketplace?" + query)));
  }

  static Account* alpha_;
  static Account* beta_;
  static std::vector<Account*> raters_;
  static std::vector<std::string> rater_keys_;
  static std::string alpha_key_;
  static std::string geocoder_, route_, invoices_, tax_, stats_, vision_, color_, secret_, draft_;
};
Account* MarketplaceTest::alpha_ = nullptr;
Account* MarketplaceTest::beta_ = nullptr;
std::vector<Account*> MarketplaceTest::raters_;
std::vector<std::string> MarketplaceTest::rater_keys_;
std::string MarketplaceTest::alpha_key_;
std::string MarketplaceTest::geocoder_, MarketplaceTest::route_, MarketplaceTest::invoices_,
    MarketplaceTest::tax_, MarketplaceTest::stats_, MarketplaceTest::vision_,
    MarketplaceTest::color_, MarketplaceTest::secret_, MarketplaceTest::draft_;

const std::set<std::string> kListed = {"Geocoder Pro", "Route Planner", "Invoice Parser",
                                       "Tax Helper",   "Text Stats",    "Vision Embed",
                                       "Color Tool"};

TEST_F(MarketplaceTest, ListsPublicFunctionsWithAVersionToAnyone) {
  Page page = Market("");
  EXPECT_EQ(NameSet(page.cards), kListed);
  EXPECT_EQ(page.total, 7);
  EXPECT_TRUE(page.next_cursor.empty());
  auto stats = std::find_if(page.cards.begin(), page.cards.end(),
                            [](const CardView& c) { return c.name == "Text Stats"; });
  ASSERT_NE(stats, page.cards.end());
  EXPECT_EQ(stats->runtime, "python");  // the latest version's
  EXPECT_EQ(stats->organization, "Alpha Tools");
  for (const auto& c : page.cards) EXPECT_FALSE(c.favorite);
}

TEST_F(MarketplaceTest, EachFilterAlone) {
  EXPECT_EQ(NameSet(Market("category=geo").cards),
            (std::set<std::string>{"Geocoder Pro", "Route Planner"}));
  EXPECT_EQ(NameSet(Market("sector=Accounting").cards),
            (std::set<std::string>{"Invoice Parser", "Tax Helper"}));
  EXPECT_EQ(
      NameSet(Market("runtime=lua").cards),
      (std::set<std::string>{"Geocoder Pro", "Route Planner", "Invoice Parser", "Tax Helper"}));
  EXPECT_EQ(NameSet(Market("runtime=python").cards),
            (std::set<std::string>{"Text Stats", "Vision Embed"}));
  EXPECT_EQ(NameSet(Market("runtime=javascript").cards), (std::set<std::string>{"Color Tool"}));
  EXPECT_EQ(NameSet(Market("compute_type=GPU").cards), (std::set<std::string>{"Vision Embed"}));
  EXPECT_EQ(Market("compute_type=CPU").cards.size(), 6u);
  EXPECT_EQ(NameSet(Market("tag=maps").cards),
            (std::set<std::string>{"Geocoder Pro", "Route Planner"}));
  EXPECT_EQ(NameSet(Market("tag=writing").cards), (std::set<std::string>{"Text Stats"}));
  EXPECT_EQ(NameSet(Market("creator=beta%20labs").cards),
            (std::set<std::string>{"Invoice Parser", "Tax Helper", "Vision Embed"}));
  EXPECT_EQ(NameSet(Market("creator=" + alpha_->org_id()).cards),
            (std::set<std::string>{"Geocoder Pro", "Route Planner", "Text Stats", "Color Tool"}));
  EXPECT_EQ(NameSet(Market("pricing=paid").cards),
            (std::set<std::string>{"Route Planner", "Invoice Parser", "Vision Embed"}));
  EXPECT_EQ(Market("pricing=free").cards.size(), 4u);
  EXPECT_EQ(NameSet(Market("q=invoices").cards), (std::set<std::string>{"Invoice Parser"}));
}

TEST_F(MarketplaceTest, FiltersCombine) {
  Page page = Market("category=Finance&pricing=free");
  EXPECT_EQ(Names(page.cards), (std::vector<std::string>{"Tax Helper"}));
  EXPECT_EQ(page.total, 1);
  EXPECT_EQ(NameSet(Market("sector=media&runtime=python&compute_type=gpu&pricing=paid").cards),
            (std::set<std::string>{"Vision Embed"}));
  EXPECT_EQ(NameSet(Market("q=geocoder&pricing=paid").cards),
            (std::set<std::string>{"Route Planner"}));
  EXPECT_EQ(NameSet(Market("tag=maps&creator=Beta%20Labs").cards), std::set<std::string>{});
  EXPECT_EQ(Market("tag=maps&creator=Beta%20Labs").total, 0);
}

TEST_F(MarketplaceTest, RefusesBadParameters) {
  auto client = g_system->Client();
  for (const char* query : {"runtime=cobol", "compute_type=TPU", "pricing=cheap", "sort=name",
                            "limit=0", "limit=500", "cursor=garbage"}) {
    auto r = Must(client->Get(std::string("/api/v1/marketplace?") + query));
    EXPECT_EQ(r.status, 422) << query << ": " << r.body;
  }
}

TEST_F(MarketplaceTest, SearchRanksTheToolNamedAfterTheQueryFirst) {
  // Route Planner says "geocoder" five times; Geocoder Pro only in its name.
  Page page = Market("q=geocoder");
  EXPECT_EQ(Names(page.cards), (std::vector<std::string>{"Geocoder Pro", "Route Planner"}));
  EXPECT_EQ(page.total, 2);
  // Stemming and websearch syntax: "invoice" finds "invoices"; "-pdf" excludes.
  EXPECT_EQ(Names(Market("q=invoice").cards), (std::vector<std::string>{"Invoice Parser"}));
  EXPECT_TRUE(Market("q=invoice%20-pdf").cards.empty());
  EXPECT_EQ(Names(Market("q=%22sales%20tax%22").cards), (std::vector<std::string>{"Tax Helper"}));
}

TEST_F(MarketplaceTest, SortsByExecutions) {
  Page page = Market("sort=executions&runtime=lua");
  ASSERT_EQ(page.cards.size(), 4u);
  for (size_t i = 1; i < page.cards.size(); ++i) {
    EXPECT_GE(page.cards[i - 1].executions, page.cards[i].executions) << Names(page.cards)[i];
  }
  EXPECT_EQ(page.cards.back().name, "Tax Helper");  // 1 execution; the others 2 or 4
  EXPECT_EQ(page.cards[2].name, "Route Planner");
  // Without q, relevance orders the same way.
  EXPECT_EQ(Names(Market("runtime=lua").cards), Names(page.cards));
}

TEST_F(MarketplaceTest, SortsByBayesianRating) {
  Page page = Market("sort=rating");
  ASSERT_EQ(page.cards.size(), 7u);
  // Four 4-star ratings beat one 5-star, which beats a 2 and a 3; unrated come last.
  EXPECT_EQ(page.cards[0].name, "Invoice Parser");
  EXPECT_EQ(page.cards[1].name, "Tax Helper");
  EXPECT_EQ(page.cards[2].name, "Geocoder Pro");
  for (size_t i = 3; i < page.cards.size(); ++i) EXPECT_EQ(page.cards[i].rating_count, 0);
  EXPECT_DOUBLE_EQ(page.cards[0].rating_average, 4);
  EXPECT_EQ(page.cards[0].rating_count, 4);
  EXPECT_DOUBLE_EQ(page.cards[2].rating_average, 2.5);
}

TEST_F(MarketplaceTest, PagesHaveNoDuplicatesOrGapsUnderEverySort) {
  for (const char* sort : {"relevance", "rating", "executions"}) {
    for (const char* q : {"", "&q=geocoder%20OR%20tax%20OR%20invoices%20OR%20text"}) {
      const std::string base = std::string("sort=") + sort + q;
      const Page whole = Market(base + "&limit=200");
      std::vector<std::string> paged;
      std::string cursor;
      int pages = 0;
      do {
        Page page = Market(base + "&limit=2" +
                           (cursor.empty() ? "" : "&cursor=" + http::UrlEncode(cursor)));
        EXPECT_LE(page.cards.size(), 2u);
        EXPECT_EQ(page.total, whole.total);
        for (const auto& c : page.cards) paged.push_back(c.name);
        cursor = page.next_cursor;
        ASSERT_LT(++pages, 10) << base;
      } while (!cursor.empty());
      EXPECT_EQ(paged, Names(whole.cards)) << base;
      EXPECT_EQ(static_cast<int64_t>(paged.size()), whole.total) << base;
    }
  }
  // A cursor belongs to its sort.
  Page first = Market("sort=executions&limit=1");
  ASSERT_FALSE(first.next_cursor.empty());
  auto client = g_system->Client();
  auto r = Must(
      client->Get("/api/v1/marketplace?sort=rating&cursor=" + http::UrlEncode(first.next_cursor)));
  EXPECT_EQ(r.status, 422);
}

TEST_F(MarketplaceTest, FacetsCountEveryFilterUnderTheOthers) {
  auto client = g_system->Client();
  auto r = Must(client->Get("/api/v1/marketplace/facets"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto doc = Json(r.body);
  auto count = [&](const char* facet, std::string_view value) -> int64_t {
    for (auto e : doc.root[facet].get_array()) {
      if (std::string_view(e["value"]) == value) return int64_t(e["count"]);
    }
    return 0;
  };
  EXPECT_EQ(int64_t(doc.root["total"]), 7);
  EXPECT_EQ(count("category", "Geo"), 2);
  EXPECT_EQ(count("category", "Finance"), 2);
  EXPECT_EQ(count("sector", "Media"), 2);
  EXPECT_EQ(count("sector", ""), 0);  // no sector is not a value
  EXPECT_EQ(count("runtime", "lua"), 4);
  EXPECT_EQ(count("runtime", "python"), 2);
  EXPECT_EQ(count("runtime", "javascript"), 1);
  EXPECT_EQ(count("compute_type", "CPU"), 6);
  EXPECT_EQ(count("compute_type", "GPU"), 1);
  EXPECT_EQ(count("tags", "maps"), 2);  // the private and draft geocoders are not counted
  EXPECT_EQ(count("pricing", "free"), 4);
  EXPECT_EQ(count("pricing", "paid"), 3);
  EXPECT_EQ(count("creator", beta_->org_id()), 3);
  bool named = false;
  for (auto e : doc.root["creator"].get_array()) {
    if (std::string_view(e["value"]) == alpha_->org_id()) {
      named = std::string_view(e["name"]) == "Alpha Tools";
    }
  }
  EXPECT_TRUE(named);

  // Under a filter, other facets narrow and the filter's own facet keeps its alternatives.
  auto filtered = Must(client->Get("/api/v1/marketplace/facets?category=Finance"));
  ASSERT_EQ(filtered.status, 200);
  doc = Json(filtered.body);
  EXPECT_EQ(int64_t(doc.root["total"]), 2);
  EXPECT_EQ(count("category", "Geo"), 2);
  EXPECT_EQ(count("pricing", "free"), 1);
  EXPECT_EQ(count("runtime", "python"), 0);
}

TEST_F(MarketplaceTest, HighlightsTrendingAndBayesianTopRated) {
  auto client = g_system->Client();
  auto r = Must(client->Get("/api/v1/marketplace/highlights"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto doc = Json(r.body);
  auto trending = ReadCards(doc.root["trending"]);
  auto top = ReadCards(doc.root["top_rated"]);
  // Only what ran in the last 7 days, most first.
  EXPECT_EQ(NameSet(trending), (std::set<std::string>{"Geocoder Pro", "Invoice Parser",
                                                      "Route Planner", "Tax Helper"}));
  EXPECT_EQ(trending.back().name, "Tax Helper");
  // A single five-star rating does not beat four four-star ratings.
  EXPECT_EQ(Names(top), (std::vector<std::string>{"Invoice Parser", "Tax Helper", "Geocoder Pro"}));
}

TEST_F(MarketplaceTest, FavoritesBelongToTheSignedInUser) {
  Account fan(*g_system, "Fan Club");
  auto& s = fan.session();
  EXPECT_EQ(Must(s.Put("/api/v1/favorites/" + tax_, "")).status, 204);
  EXPECT_EQ(Must(s.Put("/api/v1/favorites/" + tax_, "")).status, 204);  // idempotent
  EXPECT_EQ(Must(s.Put("/api/v1/favorites/" + geocoder_, "")).status, 204);
  // Unknown, private to another organization, or not an id: 404.
  for (const std::string& id : {NewUuid(), secret_, std::string("nope")}) {
    auto r = Must(s.Put("/api/v1/favorites/" + id, ""));
    EXPECT_EQ(r.status, 404) << id;
    EXPECT_EQ(Code(r), "function_not_found");
  }

  Page favorites = ReadPage(Must(s.Get("/api/v1/favorites")));
  EXPECT_EQ(Names(favorites.cards), (std::vector<std::string>{"Geocoder Pro", "Tax Helper"}));
  for (const auto& c : favorites.cards) EXPECT_TRUE(c.favorite);
  Page first = ReadPage(Must(s.Get("/api/v1/favorites?limit=1")));
  ASSERT_EQ(first.cards.size(), 1u);
  Page second = ReadPage(
      Must(s.Get("/api/v1/favorites?limit=1&cursor=" + http::UrlEncode(first.next_cursor))));
  ASSERT_EQ(second.cards.size(), 1u);
  EXPECT_EQ(second.cards[0].name, "Tax Helper");
  EXPECT_TRUE(second.next_cursor.empty());

  // The marketplace marks them for this user only.
  Page mine = ReadPage(Must(s.Get("/api/v1/marketplace?category=Finance")));
  for (const auto& c : mine.cards) EXPECT_EQ(c.favorite, c.name == "Tax Helper") << c.name;
  for (const auto& c : Market("category=Finance").cards) EXPECT_FALSE(c.favorite);

  // A key with the manage scope made by this user acts for the user.
  std::string key = fan.CreateKey(R"(["invoke","manage"])");
  auto with_key = Must(g_system->Client()->Get("/api/v1/favorites", {{"Authorization", key}}));
  EXPECT_EQ(ReadPage(with_key).cards.size(), 2u);

  EXPECT_EQ(Must(s.Delete("/api/v1/favorites/" + tax_)).status, 204);
  EXPECT_EQ(Must(s.Delete("/api/v1/favorites/" + tax_)).status, 204);
  EXPECT_EQ(Names(ReadPage(Must(s.Get("/api/v1/favorites"))).cards),
            (std::vector<std::string>{"Geocoder Pro"}));

  // Without credentials: 401.
  EXPECT_EQ(Must(g_system->Client()->Get("/api/v1/favorites")).status, 401);
  EXPECT_EQ(Must(g_system->Client()->Put("/api/v1/favorites/" + tax_, "")).status, 401);
}

TEST_F(MarketplaceTest, RatingsRules) {
  Account newcomer(*g_system, "Newcomer");
  // Never ran it: 403.
  auto r = Must(newcomer.session().Put("/api/v1/functions/" + tax_ + "/rating", R"({"stars":5})"));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Code(r), "forbidden");
  EXPECT_NE(StringField(r.body, "detail").find("run"), std::string::npos) << r.body;

  // The owner: 403, whatever else holds.
  r = Must(alpha_->session().Put("/api/v1/functions/" + geocoder_ + "/rating", R"({"stars":5})"));
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(StringField(r.body, "detail").find("owns"), std::string::npos) << r.body;

  // Validation, and functions that are not visible.
  auto& rater = raters_[0]->session();
  for (const char* body : {R"({"stars":0})", R"({"stars":6})", R"({})", R"({"stars":"4"})"}) {
    EXPECT_EQ(Must(rater.Put("/api/v1/functions/" + tax_ + "/rating", body)).status, 422) << body;
  }
  EXPECT_EQ(Must(rater.Put("/api/v1/functions/" + secret_ + "/rating", R"({"stars":4})")).status,
            404);
  EXPECT_EQ(Must(rater.Put("/api/v1/functions/" + NewUuid() + "/rating", R"({"stars":4})")).status,
            404);

  // One rating per user, editable: a later PUT replaces it (200), and the totals follow.
  auto rating_of_tax = [] {
    auto detail = Json(Must(g_system->Client()->Get("/api/v1/functions/" + tax_)).body);
    return std::pair<double, int64_t>(double(detail.root["rating"]["average"]),
                                      int64_t(detail.root["rating"]["count"]));
  };
  EXPECT_EQ(rating_of_tax(), (std::pair<double, int64_t>(5, 1)));
  r = Must(rater.Put("/api/v1/functions/" + tax_ + "/rating",
                     R"({"stars":2,"review":"Wrong rate for Quebec."})"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(IntField(r.body, "stars"), 2);
  EXPECT_EQ(rating_of_tax(), (std::pair<double, int64_t>(2, 1)));
  r = Must(rater.Put("/api/v1/functions/" + tax_ + "/rating",
                     R"({"stars":5,"review":"Fixed, and right everywhere now."})"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(rating_of_tax(), (std::pair<double, int64_t>(5, 1)));

  // The list is public; only the viewer's own rating names its user.
  auto list = Must(g_system->Client()->Get("/api/v1/functions/" + tax_ + "/ratings"));
  ASSERT_EQ(list.status, 200) << list.body;
  auto doc = Json(list.body);
  auto items = doc.root["items"].get_array();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(int64_t(items.at(0)["stars"]), 5);
  EXPECT_EQ(std::string_view(items.at(0)["review"]), "Fixed, and right everywhere now.");
  EXPECT_EQ(std::string_view(items.at(0)["organization"]["name"]), "Rater 1");
  EXPECT_TRUE(items.at(0)["user"].error() == simdjson::NO_SUCH_FIELD);
  auto own = Json(Must(rater.Get("/api/v1/functions/" + tax_ + "/ratings")).body);
  EXPECT_TRUE(own.root["items"].at(0)["user"]["id"].is_string());
}

TEST_F(MarketplaceTest, RatingsPageNewestFirst) {
  auto client = g_system->Client();
  std::vector<std::string> reviews;
  std::string cursor;
  do {
    auto r = Must(client->Get("/api/v1/functions/" + invoices_ + "/ratings?limit=3" +
                              (cursor.empty() ? "" : "&cursor=" + http::UrlEncode(cursor))));
    ASSERT_EQ(r.status, 200) << r.body;
    auto doc = Json(r.body);
    for (auto e : doc.root["items"].get_array()) {
      reviews.emplace_back(std::string_view(e["review"]));
      EXPECT_EQ(int64_t(e["stars"]), 4);
    }
    std::string_view next;
    cursor = doc.root["next_cursor"].get(next) == simdjson::SUCCESS ? std::string(next) : "";
  } while (!cursor.empty());
  EXPECT_EQ(reviews.size(), 4u);
}

// The Integrate snippets: their content, and each one run as given.
class SnippetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    owner_ = new Account(*g_system, "Snippet Owner");
    plain_ = Create(*owner_, "Plain Echo", "No keys.", "Utilities", "", "[]", 0);
    Lua(*owner_, plain_);
    private_ = Create(*owner_, "Private Echo", "No keys.", "Utilities", "", "[]", 0, "", "private");
    Lua(*owner_, private_);
  }
  static void TearDownTestSuite() { delete owner_; }

  static std::string Snippet(const std::string& id, const std::string& language,
                             const std::string& version = "") {
    auto r = Must(g_system->Client()->Get("/api/v1/functions/" + id + "/snippets" +
                                          (version.empty() ? "" : "?version=" + version)));
    EXPECT_EQ(r.status, 200) << r.body;
    return StringField(r.body, language);
  }

  // text with <API_KEY> replaced by key and each <secret_id>, in order, by the next of ids.
  static std::string Fill(std::string text, const std::string& key,
                          const std::vector<std::string>& secret_ids) {
    for (size_t at; (at = text.find("<API_KEY>")) != std::string::npos;) text.replace(at, 9, key);
    for (const auto& id : secret_ids) {
      size_t at = text.find("<secret_id>");
      if (at != std::string::npos) text.replace(at, 11, id);
    }
    return text;
  }

  // Runs program with script as its standard input; its exit status and standard output.
  static std::pair<int, std::string> RunScript(const std::string& program,
                                               const std::string& script) {
    const std::string file = g_system->data_dir() + "/snippet-" + HexEncode(RandomBytes(4));
    std::ofstream(file) << script;
    FILE* pipe = ::popen((program + " < " + file).c_str(), "r");
    std::string out;
    char buf[4096];
    for (size_t n; pipe && (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
    int status = pipe ? ::pclose(pipe) : -1;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

  static Account* owner_;
  static std::string plain_, private_;
};
Account* SnippetTest::owner_ = nullptr;
std::string SnippetTest::plain_, SnippetTest::private_;

TEST_F(SnippetTest, WithoutDeclaredKeysThereIsNoEnvKeysHeader) {
  std::string curl = Snippet(plain_, "curl");
  EXPECT_NE(curl.find("Authorization: <API_KEY>"), std::string::npos) << curl;
  EXPECT_NE(curl.find(g_system->url() + "/api/v1/functions/" + plain_ + "/invoke"),
            std::string::npos)
      << curl;
  for (const char* language : {"curl", "python", "javascript"}) {
    EXPECT_EQ(Snippet(plain_, language).find("X-Env-Keys"), std::string::npos) << language;
  }
  EXPECT_NE(Snippet(plain_, "curl", "1.0").find("/" + plain_ + "/1.0/invoke"), std::string::npos);
  auto missing =
      Must(g_system->Client()->Get("/api/v1/functions/" + plain_ + "/snippets?version=9.9"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Code(missing), "version_not_found");
  EXPECT_EQ(Must(g_system->Client()->Get("/api/v1/functions/" + private_ + "/snippets")).status,
            404);
}

TEST_F(SnippetTest, RunAsGivenWithDeclaredKeysAndSucceed) {
  Account owner(*g_system, "Keyed Owner");
  std::string fn =
      Create(owner, "Keyed Lookup", "Needs two keys.", "Geo", "Logistics", R"(["keys"])", 250);
  ASSERT_EQ(Publish(owner, fn, "1.0.0", "lua", "CPU", kNeedsKeys,
                    R"("declared_keys":["GEO_TOKEN","MAP_TOKEN"],)"
                    R"("examples":[{"title":"Porto","event":{"city":"Porto's centre"}}])")
                .status,
            201);

  Account caller(*g_system, "Snippet Caller");
  caller.TopUp(10'000'000);
  caller.AddToWorkspace(fn);
  std::string key = caller.CreateKey();
  std::vector<std::string> secrets = {caller.CreateSecret("geo", "geo-secret"),
                                      caller.CreateSecret("map", "map-secret")};

  std::string curl = Snippet(fn, "curl");
  EXPECT_NE(curl.find("-H 'X-Env-Keys: GEO_TOKEN=<secret_id>, MAP_TOKEN=<secret_id>'"),
            std::string::npos)
      << curl;
  for (const char* language : {"python", "javascript"}) {
    EXPECT_NE(Snippet(fn, language).find("GEO_TOKEN=<secret_id>, MAP_TOKEN=<secret_id>"),
              std::string::npos)
        << language;
  }

  // curl, as given, through /bin/sh: the example event (with its quote) reaches the handler.
  auto [status, out] = RunScript("/bin/sh", Fill(curl, key, secrets) + "\n");
  EXPECT_EQ(status, 0) << out;
  auto doc = Json(out);
  EXPECT_EQ(int64_t(doc.root["statusCode"]), 200) << out;
  EXPECT_EQ(std::string_view(doc.root["body"]), R"({"city":"Porto's centre"})") << out;

  // Python (standard library) and JavaScript (Node.js) print the status and the envelope.
  auto [py_status, py_out] = RunScript("python3 -", Fill(Snippet(fn, "python"), key, secrets));
  EXPECT_EQ(py_status, 0) << py_out;
  EXPECT_EQ(py_out.rfind("200 {", 0), 0u) << py_out;
  auto [js_status, js_out] = RunScript("node -", Fill(Snippet(fn, "javascript"), key, secrets));
  EXPECT_EQ(js_status, 0) << js_out;
  EXPECT_EQ(js_out.rfind("200 {", 0), 0u) << js_out;
}

TEST_F(MarketplaceTest, FunctionDetailIsPublicForPublicFunctions) {
  auto client = g_system->Client();
  auto r = Must(client->Get("/api/v1/functions/" + invoices_));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(IntField(r.body, "executions"), 4);
  EXPECT_EQ(Must(client->Get("/api/v1/functions/" + secret_)).status, 404);
  EXPECT_EQ(Must(alpha_->session().Get("/api/v1/functions/" + secret_)).status, 200);
}

}  // namespace
}  // namespace toolgate::testing
