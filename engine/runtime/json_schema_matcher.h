// SPDX-License-Identifier: MIT
// A byte-at-a-time recognizer of JSON text that validates against a compiled JSON schema: a pushdown automaton
// whose stack holds one small fixed-size frame per open value, so that copying a matcher to try a token is cheap
// and never allocates once the scratch stack has grown. Every state it can reach can still be completed (no
// dead ends), so a constrained generation never paints itself into a corner.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::runtime {

// A schema compiled into nodes (index 0 is the root).
struct JsonSchemaNode {
    enum Type : uint8_t {
        kNull = 1,
        kBoolean = 2,
        kInteger = 4,
        kNumber = 8,
        kString = 16,
        kArray = 32,
        kObject = 64,
        kAny = 127
    };
    uint8_t types = kAny;
    std::vector<std::string> literals;  // enum/const: each value's compact JSON text (empty: no enum)
    // Objects: property names as they appear between the quotes (JSON-escaped), their nodes, which are required.
    std::vector<std::string> property_names;
    std::vector<int> property_nodes;
    uint64_t required = 0;     // bit i: property i is required
    int additional_node = -1;  // the node of other properties' values; -1: no other properties
    // Arrays.
    int items_node = -1;  // -1: any value
    int64_t min_items = 0, max_items = -1;
};

class JsonSchema {
public:
    // Throws ember::Error "response schema at <path>: ..." for what it does not support.
    explicit JsonSchema(const nlohmann::json& schema);
    const JsonSchemaNode& node(int i) const { return nodes_[static_cast<size_t>(i)]; }
    int any_node() const { return any_; }

private:
    int compile(const nlohmann::json& schema, const std::string& path, int depth);
    std::vector<JsonSchemaNode> nodes_;
    int any_ = -1;
};

class JsonSchemaMatcher {
public:
    explicit JsonSchemaMatcher(std::shared_ptr<const JsonSchema> schema);

    // Feeds one byte; false (and the matcher unchanged in meaning: do not use it further) when it is refused.
    bool feed(unsigned char c);
    // Whether the bytes so far form a whole value.
    bool complete() const;
    // Copies the state of `other` (same schema) without allocating once capacity suffices.
    void assign(const JsonSchemaMatcher& other);

private:
    enum class Kind : uint8_t { value, object, array, string, key, number, literal };
    struct Frame {
        Kind kind;
        uint8_t state = 0;
        int32_t node = 0;
        uint64_t bits = 0;  // object: properties seen; key/literal: candidates still alive
        int32_t count = 0;  // array: items; key/literal: bytes matched; string: \u digits left
    };
    bool start_value(int node, unsigned char c);
    bool feed_frame(unsigned char c);
    bool can_end(const Frame& f) const;
    bool whitespace(unsigned char c);

    std::shared_ptr<const JsonSchema> schema_;
    std::vector<Frame> stack_;
    int whitespace_run_ = 0;
    bool done_ = false;  // the root value ended and nothing may follow
};

}  // namespace ember::runtime
