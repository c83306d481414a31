// SPDX-License-Identifier: MIT
// Renders a parsed template: statements, expressions, scopes, macros and loops, with jinja2's semantics under
// Hugging Face's settings. All work is charged to a Budget; every failure is a Failure located at the node
// being evaluated.
#pragma once

#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jinja/ast.h"
#include "jinja/budget.h"
#include "jinja/named_values.h"
#include "jinja/jinja_value.h"

namespace ember::chat::jinja {

// A scope: the template's top level, one loop iteration, a macro call, a with block, a captured block body.
struct Frame {
    std::shared_ptr<Frame> parent;
    NamedValues vars;

    explicit Frame(std::shared_ptr<Frame> p = nullptr) : parent(std::move(p)) {}
    const Value* find(std::string_view name) const { return vars.find(name); }
    void set(std::string_view name, Value value) { vars.set(name, std::move(value)); }
};
using FramePtr = std::shared_ptr<Frame>;

class LoopContext;

class Interpreter {
public:
    Interpreter(const Program& program, Budget& budget, const std::tm& now);
    ~Interpreter();
    Interpreter(const Interpreter&) = delete;
    Interpreter& operator=(const Interpreter&) = delete;

    // `variables` must be a dict; its entries become the template's top-level names.
    std::string render(const Value& variables);

    Budget& budget() { return budget_; }
    const std::tm& now() const { return now_; }
    uint32_t position() const { return at_; }

    Value call(const Value& callee, CallArgs& args);
    Value get_attr(const Value& obj, std::string_view name);
    Value get_item(const Value& obj, const Value& key);
    // Python's iter(), materialised.
    std::vector<Value> iterate(const Value& v);

    // Used by the callable objects.
    Value invoke_macro(const MacroStmt& def, const FramePtr& closure, CallArgs& args);
    Value recurse_loop(LoopContext& loop, const Value& iterable);
    // Keeps a frame that an object refers to alive until the render ends, when its variables are cleared.
    void capture(const FramePtr& frame) { captured_.push_back(frame); }

private:
    enum class Flow { normal, break_, continue_ };

    Flow exec_body(const Body& body, const FramePtr& frame);
    Flow exec(const Stmt& stmt, const FramePtr& frame);
    Flow exec_for(const ForStmt& stmt, const FramePtr& frame);
    Flow run_loop(const ForStmt& stmt, const FramePtr& frame, std::vector<Value> items, int depth0);
    void exec_call_block(const CallBlockStmt& stmt, const FramePtr& frame);
    std::string capture_body(const Body& body, const FramePtr& frame);
    FramePtr new_scope(const FramePtr& parent, const UndefinedAtEntry& undefined_names);
    void assign(const Target& target, Value value, const FramePtr& frame);
    void emit(std::string_view text);

    Value eval(const Expr& expr, const FramePtr& frame);
    Value lookup(std::string_view name, const FramePtr& frame);
    Value eval_call(const CallExpr& expr, const FramePtr& frame, const Value* caller);
    Value eval_filter(const FilterExpr& expr, const FramePtr& frame, const Value* hole);
    Value eval_compare(const Compare& expr, const FramePtr& frame);
    CallArgs eval_args(const Arguments& args, const FramePtr& frame);

    const Program& program_;
    Budget& budget_;
    std::tm now_;
    std::string* out_ = nullptr;
    FramePtr root_;
    std::vector<FramePtr> captured_;
    uint32_t at_ = 0;
};

}  // namespace ember::chat::jinja
