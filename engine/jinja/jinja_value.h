// SPDX-License-Identifier: MIT
// The interpreter's values: a small variant with Python's semantics where chat templates depend on them
// (truthiness, == across int/float/bool, str() and repr(), ordering). Containers are shared by reference like
// Python's; no operation may create a cycle (the mutating operations check), and destruction is iterative so
// that deeply nested values cannot exhaust the stack.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::chat::jinja {

class Budget;
class Interpreter;
class Value;
struct List;
struct Dict;
class Object;

using ListPtr = std::shared_ptr<List>;
using DictPtr = std::shared_ptr<Dict>;
using ObjectPtr = std::shared_ptr<Object>;
using StrPtr = std::shared_ptr<const std::string>;

class Value {
public:
    // In variant order.
    enum class Kind : uint8_t { undefined, none, boolean, integer, floating, string, list, dict, object };

    Value() = default;  // undefined, without a hint
    static Value undefined(std::string hint);
    static Value none() { return Value(None{}); }
    static Value boolean(bool b) { return Value(b); }
    static Value integer(int64_t i) { return Value(i); }
    static Value number(double d) { return Value(d); }
    static Value text(std::string s, bool markup = false);
    static Value text(StrPtr s, bool markup = false) { return Value(Text{std::move(s), markup}); }
    static Value make_list(std::vector<Value> items, bool tuple = false);
    static Value make_list(ListPtr l) { return Value(std::move(l)); }
    static Value make_dict(DictPtr d) { return Value(std::move(d)); }
    static Value make_dict();
    static Value make_object(ObjectPtr o) { return Value(std::move(o)); }

    Kind kind() const { return static_cast<Kind>(v_.index()); }
    bool is_undefined() const { return kind() == Kind::undefined; }
    bool is_none() const { return kind() == Kind::none; }
    bool is_bool() const { return kind() == Kind::boolean; }
    bool is_int() const { return kind() == Kind::integer; }
    bool is_float() const { return kind() == Kind::floating; }
    bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python's numbers include bool
    bool is_string() const { return kind() == Kind::string; }
    bool is_list() const { return kind() == Kind::list; }
    bool is_tuple() const;
    bool is_dict() const { return kind() == Kind::dict; }
    bool is_object() const { return kind() == Kind::object; }

    bool as_bool() const { return std::get<bool>(v_); }
    int64_t as_int() const { return std::get<int64_t>(v_); }
    double as_float() const { return std::get<double>(v_); }
    // Numbers (bool, int, float) as double / bool and int as int64.
    double to_double() const;
    int64_t to_int() const;
    const std::string& str() const { return *std::get<Text>(v_).s; }
    const StrPtr& str_ptr() const { return std::get<Text>(v_).s; }
    bool is_markup() const { return is_string() && std::get<Text>(v_).markup; }
    List& list() const { return *std::get<ListPtr>(v_); }
    const ListPtr& list_ptr() const { return std::get<ListPtr>(v_); }
    Dict& dict() const { return *std::get<DictPtr>(v_); }
    const DictPtr& dict_ptr() const { return std::get<DictPtr>(v_); }
    Object& object() const { return *std::get<ObjectPtr>(v_); }
    const ObjectPtr& object_ptr() const { return std::get<ObjectPtr>(v_); }
    // The message an error about this undefined value gives ("'x' is undefined").
    std::string undefined_message() const;
    // The address of a container or object; nullptr for scalars (identity tests, cycle checks).
    const void* identity() const;

    // When this holds the last reference to a container, moves its children into `out` (iterative release).
    void release_children_into(std::vector<Value>& out);

private:
    struct Undefined {
        StrPtr hint;
    };
    struct None {};
    struct Text {
        StrPtr s;
        bool markup = false;
    };
    template <typename T>
    explicit Value(T v) : v_(std::move(v)) {}

    std::variant<Undefined, None, bool, int64_t, double, Text, ListPtr, DictPtr, ObjectPtr> v_;
};

struct List {
    std::vector<Value> items;
    bool tuple = false;
    List() = default;
    List(std::vector<Value> i, bool t) : items(std::move(i)), tuple(t) {}
    ~List();
    List(const List&) = delete;
    List& operator=(const List&) = delete;
};

// A dict in insertion order. Keys are hashable values (none, bool, int, float, string) compared like Python's.
struct Dict {
    std::vector<std::pair<Value, Value>> entries;
    Dict() = default;
    ~Dict();
    Dict(const Dict&) = delete;
    Dict& operator=(const Dict&) = delete;

    const Value* find(const Value& key) const;
    const Value* find(std::string_view key) const;
    Value* find(std::string_view key);
    // Adds or replaces; the key must be hashable (checked by the caller with is_hashable).
    void set(Value key, Value value);
    void set(std::string_view key, Value value);
};

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keywords;
};

// Everything that is not plain data: namespaces, loop contexts, macros, functions and bound methods.
class Object : public std::enable_shared_from_this<Object> {
public:
    virtual ~Object() = default;
    virtual std::string_view type_name() const = 0;
    virtual bool callable() const { return false; }
    virtual Value call(Interpreter& interp, CallArgs& args);
    // Returns false when the object has no such attribute.
    virtual bool attribute(std::string_view name, Interpreter& interp, Value& out);
    // Methods handed out by attribute() as BoundMethods call back here.
    virtual Value call_method(std::string_view name, Interpreter& interp, CallArgs& args);
    virtual void repr(std::string& out, Budget& budget, int depth) const;
    // Values the object owns (for cycle checks and iterative release).
    virtual void for_each_child(const std::function<void(const Value&)>& visit) const { (void)visit; }
    virtual void release_children_into(std::vector<Value>& out) { (void)out; }
};

// Python type names for messages: "int", "str", "list", "dict", "NoneType", ...
std::string type_name(const Value& v);
// Jinja's object_type_repr: "list object", "dict object", "None".
std::string object_type_repr(const Value& v);

bool truthy(const Value& v);
bool is_hashable(const Value& v);

// Python str() and repr().
void append_str(std::string& out, const Value& v, Budget& budget, int depth = 0);
void append_repr(std::string& out, const Value& v, Budget& budget, int depth = 0);
std::string to_str(const Value& v, Budget& budget);
void append_string_repr(std::string& out, std::string_view s);
std::string float_repr(double d);

// Python ==, and ordering for <, <=, >, >= (throws for unorderable types; op is named in the message).
bool equal(const Value& a, const Value& b, Budget& budget, int depth = 0);
int compare(const Value& a, const Value& b, std::string_view op, Budget& budget, int depth = 0);

// Whether `target` (a container or object) is reachable from `from`: storing `from` inside `target` would then
// create a cycle.
bool reaches(const Value& from, const void* target, Budget& budget);

// JSON data to values; depth-limited, strings validated as UTF-8. `where` names the input in messages.
Value from_json(const nlohmann::ordered_json& j, Budget& budget, std::string_view where);
// Values back to JSON data, as json.dumps would see them: tuples become arrays, non-string keys strings;
// undefined, namespaces and callables are refused.
nlohmann::ordered_json to_json(const Value& v, Budget& budget);

// Hugging Face's tojson: json.dumps(ensure_ascii=False, indent=None, separators=None, sort_keys=False).
struct JsonStyle {
    bool ensure_ascii = false;
    bool has_indent = false;
    std::string indent;  // when has_indent
    std::string item_separator = ", ";
    std::string key_separator = ": ";
    bool sort_keys = false;
};
void append_json(std::string& out, const Value& v, const JsonStyle& style, Budget& budget, int depth = 0);

}  // namespace ember::chat::jinja
