// SPDX-License-Identifier: MIT
// The interpreter's non-data values: namespace(), loop, macros and callers, bound methods, global functions,
// cycler() and joiner().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jinja/interpreter.h"
#include "jinja/jinja_value.h"

namespace ember::chat::jinja {

class Namespace : public Object {
public:
    std::string_view type_name() const override { return "Namespace"; }
    bool attribute(std::string_view name, Interpreter& interp, Value& out) override;
    void repr(std::string& out, Budget& budget, int depth) const override;
    void for_each_child(const std::function<void(const Value&)>& visit) const override;
    void release_children_into(std::vector<Value>& out) override;
    void set(std::string_view name, Value value);

private:
    NamedValues attrs_;
};

class LoopContext : public Object {
public:
    LoopContext(ListPtr items, int depth0, const ForStmt* stmt, FramePtr frame)
        : items_(std::move(items)), depth0_(depth0), stmt_(stmt), frame_(std::move(frame)) {}
    std::string_view type_name() const override { return "LoopContext"; }
    bool callable() const override { return stmt_ != nullptr && stmt_->recursive; }
    Value call(Interpreter& interp, CallArgs& args) override;
    bool attribute(std::string_view name, Interpreter& interp, Value& out) override;
    Value call_method(std::string_view name, Interpreter& interp, CallArgs& args) override;
    void repr(std::string& out, Budget& budget, int depth) const override;
    void for_each_child(const std::function<void(const Value&)>& visit) const override;
    void release_children_into(std::vector<Value>& out) override;

    void set_index(size_t index0) { index0_ = index0; }
    int depth0() const { return depth0_; }
    const ForStmt& stmt() const { return *stmt_; }
    const FramePtr& frame() const { return frame_; }
    Value cycle(CallArgs& args) const;
    Value changed(CallArgs& args, Budget& budget);

private:
    ListPtr items_;
    size_t index0_ = 0;
    int depth0_;
    const ForStmt* stmt_;
    FramePtr frame_;  // the scope around the loop, for recursive calls
    std::optional<Value> last_changed_;
};

class Macro : public Object {
public:
    Macro(const MacroStmt* def, FramePtr closure) : def_(def), closure_(std::move(closure)) {}
    std::string_view type_name() const override { return "Macro"; }
    bool callable() const override { return true; }
    Value call(Interpreter& interp, CallArgs& args) override { return interp.invoke_macro(*def_, closure_, args); }
    bool attribute(std::string_view name, Interpreter& interp, Value& out) override;
    void repr(std::string& out, Budget& budget, int depth) const override;

private:
    const MacroStmt* def_;
    FramePtr closure_;
};

// A method of a value, e.g. the startswith of "abc".startswith, or loop.cycle.
class BoundMethod : public Object {
public:
    BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
    std::string_view type_name() const override { return "builtin_function_or_method"; }
    bool callable() const override { return true; }
    Value call(Interpreter& interp, CallArgs& args) override;
    void repr(std::string& out, Budget& budget, int depth) const override;
    void for_each_child(const std::function<void(const Value&)>& visit) const override { visit(self_); }
    void release_children_into(std::vector<Value>& out) override { out.push_back(std::move(self_)); }

private:
    Value self_;
    std::string name_;
};

using BuiltinFunction = Value (*)(Interpreter&, CallArgs&);

class Builtin : public Object {
public:
    Builtin(std::string_view name, BuiltinFunction fn) : name_(name), fn_(fn) {}
    std::string_view type_name() const override { return "builtin_function_or_method"; }
    bool callable() const override { return true; }
    Value call(Interpreter& interp, CallArgs& args) override { return fn_(interp, args); }
    void repr(std::string& out, Budget& budget, int depth) const override;

private:
    std::string_view name_;
    BuiltinFunction fn_;
};

class Cycler : public Object {
public:
    explicit Cycler(std::vector<Value> items) : items_(std::move(items)) {}
    std::string_view type_name() const override { return "Cycler"; }
    bool attribute(std::string_view name, Interpreter& interp, Value& out) override;
    Value call_method(std::string_view name, Interpreter& interp, CallArgs& args) override;
    void for_each_child(const std::function<void(const Value&)>& visit) const override;
    void release_children_into(std::vector<Value>& out) override;
    Value next();
    void reset() { pos_ = 0; }

private:
    std::vector<Value> items_;
    size_t pos_ = 0;
};

class Joiner : public Object {
public:
    explicit Joiner(std::string sep) : sep_(std::move(sep)) {}
    std::string_view type_name() const override { return "Joiner"; }
    bool callable() const override { return true; }
    Value call(Interpreter& interp, CallArgs& args) override;

private:
    std::string sep_;
    bool used_ = false;
};

}  // namespace ember::chat::jinja
