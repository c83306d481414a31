// SPDX-License-Identifier: MIT
// JSON schema compilation and the byte-level pushdown recognizer behind make_json_schema_constraint.
#include "runtime/json_schema_matcher.h"

#include <array>

#include "ember/error.h"

namespace ember::runtime {

namespace {

constexpr int kMaxDepth = 64;        // open containers in a value; schema nesting
constexpr int kMaxWhitespace = 48;   // consecutive whitespace bytes between tokens of JSON
constexpr int kMaxNumberBytes = 24;  // digits a number may grow to before it must end
constexpr size_t kMaxChoices = 64;   // properties of an object, values of an enum (bit sets of 64)

const std::array<std::string, 3> kKeywords = {"true", "false", "null"};

bool is_space(unsigned char c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}
bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}
bool is_hex(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

uint8_t type_bit(const std::string& name, const std::string& path) {
    if (name == "null") return JsonSchemaNode::kNull;
    if (name == "boolean") return JsonSchemaNode::kBoolean;
    if (name == "integer") return JsonSchemaNode::kInteger;
    if (name == "number") return JsonSchemaNode::kNumber | JsonSchemaNode::kInteger;
    if (name == "string") return JsonSchemaNode::kString;
    if (name == "array") return JsonSchemaNode::kArray;
    if (name == "object") return JsonSchemaNode::kObject;
    throw Error("response schema at " + path + ": unknown type '" + name + "'");
}

// A property name as it appears between the quotes of compact JSON.
std::string escaped_name(const std::string& name) {
    const std::string quoted = nlohmann::json(name).dump();
    return quoted.substr(1, quoted.size() - 2);
}

}  // namespace

JsonSchema::JsonSchema(const nlohmann::json& schema) {
    nodes_.emplace_back();  // the root, filled by compile below
    JsonSchemaNode any;
    nodes_.push_back(any);
    any_ = 1;
    nodes_[1].additional_node = any_;
    const int root = compile(schema, "$", 0);
    nodes_[0] = nodes_[static_cast<size_t>(root)];
}

int JsonSchema::compile(const nlohmann::json& schema, const std::string& path, int depth) {
    if (depth > kMaxDepth / 2) throw Error("response schema at " + path + ": nested too deeply");
    if (schema.is_boolean()) {
        if (!schema.get<bool>()) throw Error("response schema at " + path + ": false admits no value");
        return any_;
    }
    if (!schema.is_object()) throw Error("response schema at " + path + ": a schema must be an object");
    for (const char* keyword :
         {"anyOf", "oneOf", "allOf", "not", "$ref", "if", "then", "else", "patternProperties", "prefixItems",
          "propertyNames", "contains", "unevaluatedProperties", "dependentSchemas"})
        if (schema.contains(keyword))
            throw Error("response schema at " + path + ": '" + keyword + "' is not supported");

    JsonSchemaNode node;
    if (schema.contains("type")) {
        const auto& type = schema["type"];
        node.types = 0;
        if (type.is_string()) {
            node.types = type_bit(type.get<std::string>(), path);
        } else if (type.is_array() && !type.empty()) {
            for (const auto& t : type) {
                if (!t.is_string()) throw Error("response schema at " + path + ": 'type' lists a non-string");
                node.types |= type_bit(t.get<std::string>(), path);
            }
        } else {
            throw Error("response schema at " + path + ": 'type' must be a string or a list of strings");
        }
    } else if (schema.contains("properties")) {
        node.types = JsonSchemaNode::kObject;
    } else if (schema.contains("items")) {
        node.types = JsonSchemaNode::kArray;
    }
    if (schema.contains("enum") || schema.contains("const")) {
        const nlohmann::json values =
            schema.contains("const") ? nlohmann::json::array({schema["const"]}) : schema["enum"];
        if (!values.is_array() || values.empty())
            throw Error("response schema at " + path + ": 'enum' must be a non-empty list");
        if (values.size() > kMaxChoices) throw Error("response schema at " + path + ": 'enum' has more than 64 values");
        for (const auto& v : values) node.literals.push_back(v.dump());
    }

    // Children are compiled before this node is stored (compile appends to nodes_).
    if (schema.contains("properties")) {
        const auto& properties = schema["properties"];
        if (!properties.is_object()) throw Error("response schema at " + path + ": 'properties' must be an object");
        if (properties.size() > kMaxChoices) throw Error("response schema at " + path + ": more than 64 properties");
        for (const auto& [name, sub] : properties.items()) {
            node.property_names.push_back(escaped_name(name));
            node.property_nodes.push_back(compile(sub, path + "." + name, depth + 1));
        }
    }
    if (schema.contains("required")) {
        const auto& required = schema["required"];
        if (!required.is_array()) throw Error("response schema at " + path + ": 'required' must be a list");
        for (const auto& r : required) {
            if (!r.is_string()) throw Error("response schema at " + path + ": 'required' lists a non-string");
            const std::string name = escaped_name(r.get<std::string>());
            size_t i = 0;
            while (i < node.property_names.size() && node.property_names[i] != name) ++i;
            if (i == node.property_names.size()) {  // required without a schema: any value
                if (i >= kMaxChoices) throw Error("response schema at " + path + ": more than 64 properties");
                node.property_names.push_back(name);
                node.property_nodes.push_back(any_);
            }
            node.required |= uint64_t{1} << i;
        }
    }
    node.additional_node = any_;
    if (schema.contains("additionalProperties")) {
        const auto& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>())
            node.additional_node = -1;
        else
            node.additional_node = compile(extra, path + ".additionalProperties", depth + 1);
    }
    if (schema.contains("items")) {
        if (!schema["items"].is_object() && !schema["items"].is_boolean())
            throw Error("response schema at " + path + ": 'items' must be a schema (tuples are not supported)");
        node.items_node = compile(schema["items"], path + "[]", depth + 1);
    }
    for (const char* bound : {"minItems", "maxItems"}) {
        if (!schema.contains(bound)) continue;
        if (!schema[bound].is_number_integer() || schema[bound].get<int64_t>() < 0)
            throw Error("response schema at " + path + ": '" + bound + "' must be a non-negative integer");
    }
    node.min_items = schema.value("minItems", int64_t{0});
    node.max_items = schema.value("maxItems", int64_t{-1});
    if (node.max_items >= 0 && node.max_items < node.min_items)
        throw Error("response schema at " + path + ": maxItems is below minItems");
    if (node.types == 0) throw Error("response schema at " + path + ": no type admits a value");
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size() - 1);
}

JsonSchemaMatcher::JsonSchemaMatcher(std::shared_ptr<const JsonSchema> schema) : schema_(std::move(schema)) {
    stack_.reserve(16);
    stack_.push_back({Kind::value, 0, 0});
}

void JsonSchemaMatcher::assign(const JsonSchemaMatcher& other) {
    stack_.assign(other.stack_.begin(), other.stack_.end());
    whitespace_run_ = other.whitespace_run_;
    done_ = other.done_;
}

bool JsonSchemaMatcher::can_end(const Frame& f) const {
    if (f.kind == Kind::number) return f.state == 2 || f.state == 3 || f.state == 5 || f.state >= 8;
    if (f.kind != Kind::literal) return false;
    const std::vector<std::string>& literals = schema_->node(f.node).literals;
    for (size_t i = 0; i < kMaxChoices; ++i) {
        if (!(f.bits >> i & 1)) continue;
        const std::string& w = f.state == 0 ? literals[i] : kKeywords[i];
        if (w.size() == static_cast<size_t>(f.count)) return true;
    }
    return false;
}

bool JsonSchemaMatcher::complete() const {
    return done_ || (stack_.size() == 1 && can_end(stack_.back()));
}

bool JsonSchemaMatcher::whitespace(unsigned char) {
    if (whitespace_run_ >= kMaxWhitespace) return false;
    ++whitespace_run_;
    return true;
}

bool JsonSchemaMatcher::feed(unsigned char c) {
    if (done_ || stack_.empty()) return false;
    const int run = whitespace_run_;
    if (!feed_frame(c)) return false;
    if (whitespace_run_ == run) whitespace_run_ = 0;  // anything but structural whitespace ends a run
    return true;
}

// Replaces the value frame on top with the frame of the value that `c` starts.
bool JsonSchemaMatcher::start_value(int node_index, unsigned char c) {
    const JsonSchemaNode& n = schema_->node(node_index);
    Frame& f = stack_.back();
    f.node = node_index;
    f.state = 0;
    f.bits = 0;
    f.count = 0;
    if (!n.literals.empty()) {
        for (size_t i = 0; i < n.literals.size(); ++i)
            if (n.literals[i][0] == static_cast<char>(c)) f.bits |= uint64_t{1} << i;
        if (!f.bits) return false;
        f.kind = Kind::literal;
        f.count = 1;
        return true;
    }
    const bool nested = static_cast<int>(stack_.size()) < kMaxDepth;
    if (c == '{' && (n.types & JsonSchemaNode::kObject) && nested) {
        f.kind = Kind::object;
        return true;
    }
    if (c == '[' && (n.types & JsonSchemaNode::kArray) && nested) {
        f.kind = Kind::array;
        return n.max_items != 0 || n.min_items == 0;
    }
    if (c == '"' && (n.types & JsonSchemaNode::kString)) {
        f.kind = Kind::string;
        return true;
    }
    if ((c == '-' || is_digit(c)) && (n.types & (JsonSchemaNode::kInteger | JsonSchemaNode::kNumber))) {
        f.kind = Kind::number;
        f.bits = (n.types & JsonSchemaNode::kNumber) ? 0 : 1;  // 1: integers only
        return feed_frame(c);
    }
    const uint8_t keyword_types[3] = {JsonSchemaNode::kBoolean, JsonSchemaNode::kBoolean, JsonSchemaNode::kNull};
    for (size_t i = 0; i < kKeywords.size(); ++i)
        if ((n.types & keyword_types[i]) && kKeywords[i][0] == static_cast<char>(c)) f.bits |= uint64_t{1} << i;
    if (!f.bits) return false;
    f.kind = Kind::literal;
    f.state = 1;
    f.count = 1;
    return true;
}

bool JsonSchemaMatcher::feed_frame(unsigned char c) {
    // A frame that ends implicitly (a number, a literal) pops and hands the byte to its parent: hence the loop.
    while (!stack_.empty()) {
        Frame& f = stack_.back();
        const JsonSchemaNode& n = schema_->node(f.node);
        auto close = [this] {
            stack_.pop_back();
            if (stack_.empty()) done_ = true;
            return true;
        };
        auto required_met = [&n](const Frame& o) { return (n.required & ~o.bits) == 0; };
        auto key_possible = [&n](const Frame& o) {
            if (n.additional_node >= 0) return true;
            for (size_t i = 0; i < n.property_names.size(); ++i)
                if (!(o.bits >> i & 1)) return true;
            return false;
        };
        switch (f.kind) {
            case Kind::value:
                if (is_space(c)) return whitespace(c);
                return start_value(f.node, c);
            case Kind::object:
                if (is_space(c)) return whitespace(c);
                if (f.state == 0 || f.state == 3) {  // after '{' or ','
                    if (c == '"' && key_possible(f)) {
                        uint64_t alive = 0;
                        const bool free = n.additional_node >= 0;
                        for (size_t i = 0; i < n.property_names.size(); ++i)
                            if (free || !(f.bits >> i & 1)) alive |= uint64_t{1} << i;
                        const int32_t node = f.node;
                        stack_.push_back({Kind::key, static_cast<uint8_t>(free ? 0x10 : 0), node, alive, 0});
                        return true;
                    }
                    if (c == '}' && f.state == 0 && required_met(f)) return close();
                    return false;
                }
                if (f.state == 1) {  // after a key; count holds the value's node
                    if (c != ':') return false;
                    f.state = 2;
                    const int32_t value_node = f.count;
                    stack_.push_back({Kind::value, 0, value_node});
                    return true;
                }
                if (c == ',' && key_possible(f)) {
                    f.state = 3;
                    return true;
                }
                if (c == '}' && required_met(f)) return close();
                return false;
            case Kind::array: {
                if (is_space(c)) return whitespace(c);
                const bool room = n.max_items < 0 || f.count < n.max_items;
                if (f.state == 2) {
                    if (c == ',' && room) {
                        f.state = 3;
                        return true;
                    }
                    if (c == ']' && f.count >= n.min_items) return close();
                    return false;
                }
                if (c == ']' && f.state == 0 && n.min_items == 0) return close();
                if (!room) return false;
                ++f.count;
                f.state = 2;
                const int32_t item = n.items_node >= 0 ? n.items_node : schema_->any_node();
                stack_.push_back({Kind::value, 0, item});
                continue;  // the byte starts the item
            }
            case Kind::string:
            case Kind::key: {
                const uint8_t escape = f.state & 0x0f;  // 0x10: a key that may be any name; 0x20: \uD... seen
                const bool is_key = f.kind == Kind::key;
                if (escape == 0 && c == '"') {
                    if (!is_key) return close();
                    // The key ends: which property is it?
                    int match = -1;
                    for (size_t i = 0; i < n.property_names.size(); ++i)
                        if ((f.bits >> i & 1) && n.property_names[i].size() == static_cast<size_t>(f.count))
                            match = static_cast<int>(i);
                    stack_.pop_back();
                    Frame& object = stack_.back();
                    if (match >= 0 && (object.bits >> match & 1)) return false;  // a property given twice
                    if (match < 0 && n.additional_node < 0) return false;
                    if (match >= 0) object.bits |= uint64_t{1} << match;
                    object.count = match >= 0 ? n.property_nodes[static_cast<size_t>(match)] : n.additional_node;
                    object.state = 1;
                    return true;
                }
                if (escape == 0) {
                    if (c < 0x20) return false;
                    if (c == '\\') f.state = static_cast<uint8_t>((f.state & 0xf0) | 1);
                } else if (escape == 1) {
                    if (c == 'u')
                        f.state = static_cast<uint8_t>((f.state & 0xf0) | 5);
                    else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
                             c == 't')
                        f.state &= 0xf0;
                    else
                        return false;
                } else {
                    // \uXXXX, but no surrogate halves (\uD800-\uDFFF): strict parsers refuse unpaired ones.
                    if (!is_hex(c)) return false;
                    if (escape == 4 && (f.state & 0x20) && !(c >= '0' && c <= '7')) return false;
                    const uint8_t surrogate = escape == 5 && (c == 'd' || c == 'D') ? 0x20 : 0;
                    f.state = static_cast<uint8_t>((f.state & 0xd0) | surrogate | (escape == 2 ? 0 : escape - 1));
                }
                if (!is_key) return true;
                uint64_t alive = 0;
                for (size_t i = 0; i < n.property_names.size(); ++i) {
                    const std::string& name = n.property_names[i];
                    if ((f.bits >> i & 1) && name.size() > static_cast<size_t>(f.count) &&
                        name[static_cast<size_t>(f.count)] == static_cast<char>(c))
                        alive |= uint64_t{1} << i;
                }
                const bool free = f.state & 0x10;
                if (!alive && !free) return false;
                f.bits = alive;
                ++f.count;
                return true;
            }
            case Kind::number: {
                const bool integer = f.bits == 1;
                const bool capped = f.count >= kMaxNumberBytes;
                uint8_t next = 0xff;
                switch (f.state) {
                    case 0:
                        next = c == '-' ? 1 : c == '0' ? 2 : is_digit(c) ? 3 : 0xff;
                        break;
                    case 1:
                        next = c == '0' ? 2 : is_digit(c) ? 3 : 0xff;
                        break;
                    case 2:
                        next = (c == '.' && !integer) ? 4 : ((c == 'e' || c == 'E') && !integer) ? 6 : 0xff;
                        break;
                    case 3:
                        next = is_digit(c) && !capped                 ? 3
                               : (c == '.' && !integer)               ? 4
                               : ((c == 'e' || c == 'E') && !integer) ? 6
                                                                      : 0xff;
                        break;
                    case 4:
                        next = is_digit(c) ? 5 : 0xff;
                        break;
                    case 5:
                        next = is_digit(c) && !capped ? 5 : (c == 'e' || c == 'E') ? 6 : 0xff;
                        break;
                    case 6:
                        next = (c == '+' || c == '-') ? 7 : is_digit(c) ? 8 : 0xff;
                        break;
                    case 7:
                        next = is_digit(c) ? 8 : 0xff;
                        break;
                    case 8:
                        next = is_digit(c) ? 9 : 0xff;
                        break;  // exponents of two digits at most: no overflow
                    case 9:
                        break;
                }
                if (next != 0xff) {
                    f.state = next;
                    ++f.count;
                    return true;
                }
                if (!can_end(f)) return false;
                stack_.pop_back();
                continue;
            }
            case Kind::literal: {
                uint64_t alive = 0;
                for (size_t i = 0; i < kMaxChoices; ++i) {
                    if (!(f.bits >> i & 1)) continue;
                    const std::string& w = f.state == 0 ? n.literals[i] : kKeywords[i];
                    if (w.size() > static_cast<size_t>(f.count) &&
                        w[static_cast<size_t>(f.count)] == static_cast<char>(c))
                        alive |= uint64_t{1} << i;
                }
                if (alive) {
                    f.bits = alive;
                    ++f.count;
                    return true;
                }
                if (!can_end(f)) return false;
                stack_.pop_back();
                continue;
            }
        }
    }
    return false;
}

}  // namespace ember::runtime
