#include "toolgate/secrets/env_resolver.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include "toolgate/base/crypto.h"

namespace toolgate::secrets {
namespace {

constexpr const char* kOrg = "org-caller";
constexpr const char* kId1 = "11111111-1111-4111-8111-111111111111";
constexpr const char* kId2 = "22222222-2222-4222-8222-222222222222";
constexpr const char* kOther = "33333333-3333-4333-8333-333333333333";

class EnvResolverTest : public testing::Test {
 protected:
  EnvResolverTest() : box_((InitCrypto(), RandomBytes(kKeyBytes))) {
    crypto_box_keypair(pk_, sk_);
    Add(kId1, kOrg, "value-one");
    Add(kId2, kOrg, std::string(300, 'v'));  // longer than any small-string buffer
    Add(kOther, "org-other", "theirs");
  }

  void Add(const std::string& id, const std::string& org, const std::string& value) {
    auto sealed = box_.Encrypt(org, id, value);
    rows_[id] = {id, org, sealed.nonce, sealed.ciphertext};
  }

  v1::InvokeJob Job(const char* header, std::vector<std::string> declared) {
    v1::InvokeJob job;
    job.set_env_keys_present(true);
    job.set_env_keys_header(header);
    for (const auto& k : declared) job.mutable_function()->add_declared_keys(k);
    job.mutable_principal()->set_org_id(kOrg);
    return job;
  }

  // The problem code, or the opened EnvMap rendered "K=V;..." in key order.
  std::string Resolve(const v1::InvokeJob& job) {
    auto mappings = DeclaredMappings(job);
    if (auto* p = std::get_if<v1::Problem>(&mappings)) return p->code();
    const auto& declared = std::get<std::vector<core::EnvKeyMapping>>(mappings);
    SecretCache::Rows visible;
    for (const auto& id : LookupIds(declared)) {
      if (rows_.count(id)) visible[id] = rows_[id];
    }
    auto sealed = SealEnv(declared, job.principal().org_id(), visible, box_,
                          std::string(reinterpret_cast<char*>(pk_), sizeof pk_));
    if (auto* p = std::get_if<v1::Problem>(&sealed)) {
      last_detail_ = p->detail();
      return p->code();
    }
    const auto& bytes = std::get<std::string>(sealed);
    std::string opened(bytes.size() - crypto_box_SEALBYTES, '\0');
    if (crypto_box_seal_open(reinterpret_cast<unsigned char*>(opened.data()),
                             reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                             pk_, sk_) != 0) {
      return "does not open";
    }
    v1::EnvMap env;
    if (!env.ParseFromString(opened)) return "not an EnvMap";
    std::map<std::string, std::string> sorted(env.values().begin(), env.values().end());
    std::string out;
    for (const auto& [k, v] : sorted)
      out += k + "=" + (v.size() > 20 ? "<" + std::to_string(v.size()) + ">" : v) + ";";
    return out;
  }

  SecretBox box_;
  unsigned char pk_[crypto_box_PUBLICKEYBYTES];
  unsigned char sk_[crypto_box_SECRETKEYBYTES];
  std::map<std::string, EncryptedSecret> rows_;
  std::string last_detail_;
};

TEST_F(EnvResolverTest, SealsEveryDeclaredKey) {
  std::string header = std::string("B = ") + kId2 + " , A=" + kId1;
  EXPECT_EQ(Resolve(Job(header.c_str(), {"A", "B"})), "A=value-one;B=<300>;");
}

TEST_F(EnvResolverTest, IdsAreCaseInsensitive) {
  std::string upper = kId1;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  std::string header = "A=" + upper;
  EXPECT_EQ(Resolve(Job(header.c_str(), {"A"})), "A=value-one;");
}

TEST_F(EnvResolverTest, AnotherOrganizationsSecretIsUnknown) {
  std::string header = std::string("A=") + kOther;
  EXPECT_EQ(Resolve(Job(header.c_str(), {"A"})), "unknown_secret");
  EXPECT_NE(last_detail_.find("A"), std::string::npos);
  EXPECT_EQ(last_detail_.find("theirs"), std::string::npos);
}

TEST_F(EnvResolverTest, MissingAndMalformedIdsGetTheSameAnswer) {
  EXPECT_EQ(Resolve(Job("A=44444444-4444-4444-8444-444444444444", {"A"})), "unknown_secret");
  std::string missing_detail = last_detail_;
  EXPECT_EQ(Resolve(Job("A=not-a-uuid", {"A"})), "unknown_secret");
  EXPECT_EQ(last_detail_, missing_detail);
}

TEST_F(EnvResolverTest, FirstBadKeyInDeclaredOrderIsNamed) {
  std::string header = std::string("A=") + kId1 + ",B=nope,C=nope";
  EXPECT_EQ(Resolve(Job(header.c_str(), {"A", "C", "B"})), "unknown_secret");
  EXPECT_NE(last_detail_.find(" C "), std::string::npos) << last_detail_;
}

TEST_F(EnvResolverTest, DefensiveChecksOfTheHeader) {
  EXPECT_EQ(Resolve(Job("garbage", {"A"})), "invalid_env_keys");
  std::string header = std::string("B=") + kId1;
  EXPECT_EQ(Resolve(Job(header.c_str(), {"A"})), "missing_env_key");
}

TEST_F(EnvResolverTest, UndecryptableRowIsAnInternalError) {
  rows_[kId1].ciphertext[0] ^= 1;
  std::string header = std::string("A=") + kId1;
  EXPECT_EQ(Resolve(Job(header.c_str(), {"A"})), "internal_error");
}

}  // namespace
}  // namespace toolgate::secrets
