// SPDX-License-Identifier: MIT
// The JSON schema grammar behind structured output: what it accepts, what it refuses, and that it has no dead
// ends (a random walk over allowed bytes always reaches a complete value that validates).
#include <gtest/gtest.h>

#include <random>

#include "ember/constraint.h"

using ember::check_json_schema_text;
using nlohmann::json;

namespace {

bool accepts(const json& schema, std::string_view text) {
    return check_json_schema_text(schema, text).complete;
}
bool prefix(const json& schema, std::string_view text) {
    return check_json_schema_text(schema, text).prefix_ok;
}

const json kPerson = json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "kind": {"enum": ["cat", "dog", 3]},
    "home": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
             "additionalProperties": false},
    "score": {"type": ["number", "null"]}
  },
  "required": ["name", "age"],
  "additionalProperties": false
})");

}  // namespace

TEST(JsonSchemaGrammar, AcceptsValidObjects) {
    EXPECT_TRUE(accepts(kPerson, R"({"name":"Ann","age":3})"));
    EXPECT_TRUE(accepts(kPerson, "{ \"age\": -12, \"name\": \"B\\\"o\\u00e9\" }"));
    EXPECT_TRUE(
        accepts(kPerson, R"({"name":"A","age":0,"tags":["x","y"],"kind":3,"home":{"city":"Oslo"},"score":1.5e3})"));
    EXPECT_TRUE(accepts(kPerson, R"({"name":"A","age":1,"kind":"dog","score":null})"));
}

TEST(JsonSchemaGrammar, RefusesInvalidObjects) {
    EXPECT_FALSE(prefix(kPerson, R"({"name":"Ann","age":3.5)"));                   // integer
    EXPECT_FALSE(prefix(kPerson, R"({"nick")"));                                   // no such property
    EXPECT_FALSE(prefix(kPerson, R"({"name":"A","name")"));                        // given twice
    EXPECT_FALSE(prefix(kPerson, R"({"name":"A"})"));                              // age is required
    EXPECT_FALSE(prefix(kPerson, R"({"name":"A","age":1,"tags":["a","b","c"])"));  // maxItems
    EXPECT_FALSE(prefix(kPerson, R"({"name":"A","age":1,"kind":"cow")"));          // enum
    EXPECT_FALSE(prefix(kPerson, R"({"name":"A","age":01)"));                      // leading zero
    EXPECT_FALSE(prefix(kPerson, R"({"name":"A","age":1,"home":{}})"));            // nested required
    EXPECT_FALSE(prefix(kPerson, R"({"name":"A","age":1} x)"));                    // nothing after the value
    EXPECT_FALSE(prefix(kPerson, "{\"name\":\"a\nb\""));                           // raw control character
    EXPECT_FALSE(prefix(kPerson, R"({"name":"\uD800)"));                           // a surrogate half
    EXPECT_TRUE(prefix(kPerson, R"({"name":"\uD7FF\u00e9)"));
    EXPECT_TRUE(prefix(kPerson, R"({"name":"A","age":1)"));
    EXPECT_FALSE(accepts(kPerson, R"({"name":"A","age":1)"));
}

TEST(JsonSchemaGrammar, AnyJsonAndScalars) {
    const json any = json::object();
    EXPECT_TRUE(accepts(any, R"({"a":[1,{"b":null}],"c":true})"));
    EXPECT_TRUE(accepts(any, "12"));
    EXPECT_TRUE(accepts(json{{"type", "object"}}, R"({"x":"y"})"));
    EXPECT_FALSE(prefix(json{{"type", "object"}}, "["));
    EXPECT_TRUE(accepts(json{{"type", "boolean"}}, "false"));
    EXPECT_FALSE(prefix(json{{"type", "boolean"}}, "n"));
    EXPECT_FALSE(prefix(any, std::string(60, ' ')));  // whitespace runs are capped
}

TEST(JsonSchemaGrammar, UnsupportedKeywordsAreNamed) {
    try {
        check_json_schema_text(json::parse(R"({"properties":{"a":{"anyOf":[]}}})"), "{}");
        FAIL() << "no error";
    } catch (const ember::Error& e) {
        EXPECT_NE(std::string(e.what()).find("$.a: 'anyOf' is not supported"), std::string::npos) << e.what();
    }
    EXPECT_THROW(check_json_schema_text(json{{"type", "thing"}}, ""), ember::Error);
    EXPECT_THROW(check_json_schema_text(json::parse(R"({"type":"array","minItems":3,"maxItems":1})"), ""),
                 ember::Error);
}

// Random walks over allowed bytes never get stuck and end in a value that the schema accepts.
TEST(JsonSchemaGrammar, RandomWalksAlwaysComplete) {
    const std::string alphabet = "{}[]\":,.-+eE0123456789 \nabcdefghijklmnopqrstuvwxyzACT\\u";
    std::mt19937 rng(7);
    for (int walk = 0; walk < 25; ++walk) {
        std::string text;
        for (int step = 0; step < 300; ++step) {
            if (check_json_schema_text(kPerson, text).complete && rng() % 4 == 0) break;
            std::vector<char> ok;
            for (char c : alphabet)
                if (prefix(kPerson, text + c)) ok.push_back(c);
            if (ok.empty()) {  // only a whole value may allow nothing more
                ASSERT_TRUE(check_json_schema_text(kPerson, text).complete) << "dead end after: " << text;
                break;
            }
            // Past 100 bytes prefer closing characters so that the walk ends.
            std::vector<char> closing;
            for (char c : ok)
                if (c == '}' || c == ']' || c == '"' || c == ',' || c == '0') closing.push_back(c);
            const auto& pool = (step > 100 && !closing.empty()) ? closing : ok;
            text += pool[rng() % pool.size()];
        }
        if (!check_json_schema_text(kPerson, text).complete) continue;
        const json parsed = json::parse(text);  // valid JSON
        EXPECT_TRUE(parsed.contains("name") && parsed["name"].is_string()) << text;
        EXPECT_TRUE(parsed.contains("age") && parsed["age"].is_number_integer()) << text;
    }
}
