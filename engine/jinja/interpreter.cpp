// SPDX-License-Identifier: MIT
// Rendering a parsed template: statements, expressions, scopes, macros and loops.
#include "jinja/interpreter.h"

#include "jinja/builtins.h"
#include "jinja/objects.h"
#include "jinja/unicode.h"

namespace ember::chat::jinja {

// ---------------------------------------------------------------------------------------------------------------
// Rendering

Interpreter::Interpreter(const Program& program, Budget& budget, const std::tm& now)
    : program_(program), budget_(budget), now_(now) {}

Interpreter::~Interpreter() {
    // Objects that refer to frames (macros, recursive loops) may sit in those frames or their ancestors:
    // clearing their variables breaks every such cycle. Values are released iteratively.
    std::vector<Value> released;
    if (root_) root_->vars.release_into(released);
    for (const FramePtr& captured : captured_)
        for (Frame* f = captured.get(); f; f = f->parent.get()) f->vars.release_into(released);
    while (!released.empty()) {
        Value v = std::move(released.back());
        released.pop_back();
        v.release_children_into(released);
    }
}

std::string Interpreter::render(const Value& variables) {
    root_ = std::make_shared<Frame>();
    if (variables.is_dict())
        for (const auto& [k, v] : variables.dict().entries)
            if (k.is_string()) root_->set(k.str(), v);
    for (const std::string& name : program_.body_undefined)
        root_->set(name, Value::undefined("'" + name + "' is undefined"));
    std::string out;
    out_ = &out;
    exec_body(program_.body, root_);
    out_ = nullptr;
    return out;
}

void Interpreter::emit(std::string_view text) {
    out_->append(text);
    budget_.check_output(out_->size());
}

FramePtr Interpreter::new_scope(const FramePtr& parent, const UndefinedAtEntry& undefined_names) {
    auto scope = std::make_shared<Frame>(parent);
    for (const std::string& name : undefined_names) scope->set(name, Value::undefined("'" + name + "' is undefined"));
    return scope;
}

std::string Interpreter::capture_body(const Body& body, const FramePtr& frame) {
    std::string buffer;
    std::string* saved = out_;
    out_ = &buffer;
    try {
        exec_body(body, frame);
    } catch (...) {
        out_ = saved;
        throw;
    }
    out_ = saved;
    return buffer;
}

Interpreter::Flow Interpreter::exec_body(const Body& body, const FramePtr& frame) {
    for (const StmtPtr& stmt : body) {
        const Flow flow = exec(*stmt, frame);
        if (flow != Flow::normal) return flow;
    }
    return Flow::normal;
}

Interpreter::Flow Interpreter::exec(const Stmt& stmt, const FramePtr& frame) {
    at_ = stmt.pos;
    budget_.step();
    budget_.check_stack();
    switch (stmt.kind) {
        case StmtKind::text:
            emit(static_cast<const TextStmt&>(stmt).text);
            break;
        case StmtKind::print: {
            const Value v = eval(*static_cast<const PrintStmt&>(stmt).expr, frame);
            if (v.is_string()) {
                emit(v.str());
            } else {
                std::string s;
                append_str(s, v, budget_);
                emit(s);
            }
            break;
        }
        case StmtKind::if_: {
            const auto& node = static_cast<const IfStmt&>(stmt);
            for (const auto& [cond, body] : node.branches)
                if (truthy(eval(*cond, frame))) return exec_body(body, frame);
            return exec_body(node.otherwise, frame);
        }
        case StmtKind::for_:
            return exec_for(static_cast<const ForStmt&>(stmt), frame);
        case StmtKind::set: {
            const auto& node = static_cast<const SetStmt&>(stmt);
            assign(node.target, eval(*node.value, frame), frame);
            break;
        }
        case StmtKind::set_block: {
            const auto& node = static_cast<const SetBlockStmt&>(stmt);
            Value text = Value::text(capture_body(node.body, new_scope(frame, node.body_undefined)));
            if (node.filter) text = eval_filter(static_cast<const FilterExpr&>(*node.filter), frame, &text);
            assign(node.target, std::move(text), frame);
            break;
        }
        case StmtKind::macro: {
            const auto& node = static_cast<const MacroStmt&>(stmt);
            capture(frame);
            frame->set(node.name, Value::make_object(std::make_shared<Macro>(&node, frame)));
            break;
        }
        case StmtKind::call_block:
            exec_call_block(static_cast<const CallBlockStmt&>(stmt), frame);
            break;
        case StmtKind::filter_block: {
            const auto& node = static_cast<const FilterBlockStmt&>(stmt);
            const Value text = Value::text(capture_body(node.body, new_scope(frame, node.body_undefined)));
            const Value result = eval_filter(static_cast<const FilterExpr&>(*node.filter), frame, &text);
            emit(to_str(result, budget_));
            break;
        }
        case StmtKind::with: {
            const auto& node = static_cast<const WithStmt&>(stmt);
            std::vector<Value> values;
            for (const auto& [target, expr] : node.assignments) values.push_back(eval(*expr, frame));
            auto inner = new_scope(frame, node.body_undefined);
            for (size_t i = 0; i < values.size(); ++i) assign(node.assignments[i].first, std::move(values[i]), inner);
            return exec_body(node.body, inner);
        }
        case StmtKind::break_:
            return Flow::break_;
        case StmtKind::continue_:
            return Flow::continue_;
    }
    return Flow::normal;
}

void Interpreter::exec_call_block(const CallBlockStmt& stmt, const FramePtr& frame) {
    capture(frame);
    const Value caller = Value::make_object(std::make_shared<Macro>(&stmt.caller, frame));
    const Value result = eval_call(static_cast<const CallExpr&>(*stmt.call), frame, &caller);
    emit(to_str(result, budget_));
}

void Interpreter::assign(const Target& target, Value value, const FramePtr& frame) {
    at_ = target.pos;
    switch (target.kind) {
        case Target::Kind::name:
            frame->set(target.names[0], std::move(value));
            return;
        case Target::Kind::tuple: {
            std::vector<Value> items = iterate(value);
            at_ = target.pos;
            if (items.size() < target.names.size())
                fail("not enough values to unpack (expected " + std::to_string(target.names.size()) + ", got " +
                     std::to_string(items.size()) + ")");
            if (items.size() > target.names.size())
                fail("too many values to unpack (expected " + std::to_string(target.names.size()) + ")");
            for (size_t i = 0; i < items.size(); ++i) frame->set(target.names[i], std::move(items[i]));
            return;
        }
        case Target::Kind::attribute: {
            const Value ns = lookup(target.names[0], frame);
            auto* object = ns.is_object() ? dynamic_cast<Namespace*>(&ns.object()) : nullptr;
            if (!object) fail("cannot assign attribute on non-namespace object");
            if (reaches(value, object, budget_)) fail("cannot store a namespace inside itself");
            object->set(target.attr, std::move(value));
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Loops

Interpreter::Flow Interpreter::exec_for(const ForStmt& stmt, const FramePtr& frame) {
    const Value iterable = eval(*stmt.iter, frame);
    at_ = stmt.pos;
    std::vector<Value> items = iterate(iterable);
    const Flow flow = run_loop(stmt, frame, std::move(items), 0);
    (void)flow;
    return Flow::normal;
}

Interpreter::Flow Interpreter::run_loop(const ForStmt& stmt, const FramePtr& frame, std::vector<Value> items,
                                        int depth0) {
    if (stmt.filter) {
        std::vector<Value> kept;
        for (Value& item : items) {
            budget_.step();
            auto scope = std::make_shared<Frame>(frame);
            assign(stmt.target, item, scope);
            if (truthy(eval(*stmt.filter, scope))) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    if (items.empty()) {
        exec_body(stmt.otherwise, new_scope(frame, stmt.otherwise_undefined));
        return Flow::normal;
    }
    auto list = std::make_shared<List>(std::move(items), false);
    if (stmt.recursive) capture(frame);
    auto loop = std::make_shared<LoopContext>(list, depth0, &stmt, stmt.recursive ? frame : nullptr);
    const Value loop_value = Value::make_object(loop);
    for (size_t i = 0; i < list->items.size(); ++i) {
        budget_.step();
        loop->set_index(i);
        auto scope = new_scope(frame, stmt.body_undefined);
        scope->set("loop", loop_value);
        assign(stmt.target, list->items[i], scope);
        if (exec_body(stmt.body, scope) == Flow::break_) break;
    }
    return Flow::normal;
}

Value Interpreter::recurse_loop(LoopContext& loop, const Value& iterable) {
    CallDepth depth(budget_);
    std::vector<Value> items = iterate(iterable);
    std::string buffer;
    std::string* saved = out_;
    out_ = &buffer;
    try {
        run_loop(loop.stmt(), loop.frame(), std::move(items), loop.depth0() + 1);
    } catch (...) {
        out_ = saved;
        throw;
    }
    out_ = saved;
    return Value::text(std::move(buffer));
}

// ---------------------------------------------------------------------------------------------------------------
// Macros

Value Interpreter::invoke_macro(const MacroStmt& def, const FramePtr& closure, CallArgs& args) {
    CallDepth depth(budget_);
    const std::string what = "macro '" + def.name + "'";
    auto frame = new_scope(closure, def.body_undefined);
    const size_t n_params = def.params.size();
    std::vector<std::pair<std::string, Value>> kwargs = std::move(args.keywords);
    auto take_keyword = [&](std::string_view name, Value& out) {
        for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
            if (it->first == name) {
                out = std::move(it->second);
                kwargs.erase(it);
                return true;
            }
        }
        return false;
    };
    std::vector<bool> given(n_params, false);
    std::vector<Value> values(n_params);
    bool found_caller = false;
    for (size_t i = 0; i < n_params; ++i) {
        if (i < args.positional.size()) {
            values[i] = args.positional[i];
            given[i] = true;
        } else {
            given[i] = take_keyword(def.params[i].name, values[i]);
            if (def.params[i].name == "caller") found_caller = true;
        }
    }
    if (def.uses_caller && !found_caller) {
        Value caller;
        if (!take_keyword("caller", caller)) caller = Value::undefined("No caller defined");
        frame->set("caller", std::move(caller));
    }
    if (def.uses_kwargs) {
        auto d = std::make_shared<Dict>();
        for (auto& [k, v] : kwargs) d->set(k, std::move(v));
        frame->set("kwargs", Value::make_dict(std::move(d)));
    } else if (!kwargs.empty()) {
        if (kwargs.front().first == "caller") fail(what + " was invoked with a call block but does not use caller()");
        fail(what + " takes no keyword argument '" + kwargs.front().first + "'");
    }
    if (def.uses_varargs) {
        std::vector<Value> extra;
        for (size_t i = n_params; i < args.positional.size(); ++i) extra.push_back(args.positional[i]);
        frame->set("varargs", Value::make_list(std::move(extra), true));
    } else if (args.positional.size() > n_params) {
        fail(what + " takes not more than " + std::to_string(n_params) + " argument(s)");
    }
    // Defaults are evaluated in the macro's scope, after the parameters before them are bound.
    for (size_t i = 0; i < n_params; ++i) {
        const Param& p = def.params[i];
        if (!given[i]) {
            values[i] = p.default_value ? eval(*p.default_value, frame)
                                        : Value::undefined("parameter '" + p.name + "' was not provided");
        }
        frame->set(p.name, std::move(values[i]));
    }
    std::string buffer;
    std::string* saved = out_;
    out_ = &buffer;
    try {
        exec_body(def.body, frame);
    } catch (...) {
        out_ = saved;
        throw;
    }
    out_ = saved;
    return Value::text(std::move(buffer));
}

// ---------------------------------------------------------------------------------------------------------------
// Expressions

Value Interpreter::lookup(std::string_view name, const FramePtr& frame) {
    for (const Frame* f = frame.get(); f; f = f->parent.get())
        if (const Value* v = f->find(name)) return *v;
    Value global;
    if (find_global(name, global)) return global;
    return Value::undefined("'" + std::string(name) + "' is undefined");
}

CallArgs Interpreter::eval_args(const Arguments& args, const FramePtr& frame) {
    CallArgs out;
    for (const ExprPtr& e : args.positional) out.positional.push_back(eval(*e, frame));
    for (const auto& [name, e] : args.keywords) out.keywords.emplace_back(name, eval(*e, frame));
    if (args.star_args) {
        const Value extra = eval(*args.star_args, frame);
        for (Value& v : iterate(extra)) out.positional.push_back(std::move(v));
    }
    if (args.star_kwargs) {
        const Value extra = eval(*args.star_kwargs, frame);
        if (!extra.is_dict()) fail("argument after ** must be a mapping, not " + type_name(extra));
        for (const auto& [k, v] : extra.dict().entries) {
            if (!k.is_string()) fail("keywords must be strings");
            out.keywords.emplace_back(k.str(), v);
        }
    }
    return out;
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
    if (callee.is_undefined()) fail(callee.undefined_message());
    if (!callee.is_object() || !callee.object().callable()) fail("'" + type_name(callee) + "' object is not callable");
    budget_.step();
    return callee.object().call(*this, args);
}

Value Interpreter::eval_call(const CallExpr& expr, const FramePtr& frame, const Value* caller) {
    const Value callee = eval(*expr.callee, frame);
    CallArgs args = eval_args(expr.args, frame);
    if (caller) args.keywords.emplace_back("caller", *caller);
    at_ = expr.pos;
    return call(callee, args);
}

Value Interpreter::eval_filter(const FilterExpr& expr, const FramePtr& frame, const Value* hole) {
    Value operand;
    if (!expr.operand)
        operand = hole ? *hole : Value();
    else if (hole && expr.operand->kind == ExprKind::filter)
        operand = eval_filter(static_cast<const FilterExpr&>(*expr.operand), frame, hole);
    else
        operand = eval(*expr.operand, frame);
    CallArgs args = eval_args(expr.args, frame);
    at_ = expr.pos;
    if (!has_filter(expr.name)) fail("no filter named '" + expr.name + "'");
    return apply_filter(*this, expr.name, operand, args);
}

Value Interpreter::eval_compare(const Compare& expr, const FramePtr& frame) {
    Value left = eval(*expr.first, frame);
    for (const auto& [op, right_expr] : expr.rest) {
        Value right = eval(*right_expr, frame);
        at_ = expr.pos;
        if (!compare_op(op, left, right, budget_)) return Value::boolean(false);
        left = std::move(right);
    }
    return Value::boolean(true);
}

Value Interpreter::eval(const Expr& expr, const FramePtr& frame) {
    at_ = expr.pos;
    budget_.step();
    budget_.check_stack();
    switch (expr.kind) {
        case ExprKind::literal:
            return static_cast<const Literal&>(expr).value;
        case ExprKind::name:
            return lookup(static_cast<const Name&>(expr).name, frame);
        case ExprKind::list: {
            const auto& node = static_cast<const ListExpr&>(expr);
            std::vector<Value> items;
            items.reserve(node.items.size());
            for (const ExprPtr& e : node.items) items.push_back(eval(*e, frame));
            return Value::make_list(std::move(items), node.tuple);
        }
        case ExprKind::dict: {
            const auto& node = static_cast<const DictExpr&>(expr);
            auto d = std::make_shared<Dict>();
            for (const auto& [k, v] : node.items) {
                Value key = eval(*k, frame);
                Value value = eval(*v, frame);
                at_ = k->pos;
                if (!is_hashable(key)) fail("unhashable type: '" + type_name(key) + "'");
                d->set(std::move(key), std::move(value));
            }
            return Value::make_dict(std::move(d));
        }
        case ExprKind::get_attr: {
            const auto& node = static_cast<const GetAttr&>(expr);
            const Value obj = eval(*node.object, frame);
            at_ = expr.pos;
            return get_attr(obj, node.attr);
        }
        case ExprKind::get_item: {
            const auto& node = static_cast<const GetItem&>(expr);
            const Value obj = eval(*node.object, frame);
            const Value key = eval(*node.key, frame);
            at_ = expr.pos;
            return get_item(obj, key);
        }
        case ExprKind::slice: {
            const auto& node = static_cast<const SliceExpr&>(expr);
            const Value obj = eval(*node.object, frame);
            const Value start = node.start ? eval(*node.start, frame) : Value::none();
            const Value stop = node.stop ? eval(*node.stop, frame) : Value::none();
            const Value step = node.step ? eval(*node.step, frame) : Value::none();
            at_ = expr.pos;
            if (obj.is_undefined()) fail(obj.undefined_message());
            return slice_value(obj, start, stop, step, budget_);
        }
        case ExprKind::call:
            return eval_call(static_cast<const CallExpr&>(expr), frame, nullptr);
        case ExprKind::filter:
            return eval_filter(static_cast<const FilterExpr&>(expr), frame, nullptr);
        case ExprKind::test: {
            const auto& node = static_cast<const TestExpr&>(expr);
            const Value operand = eval(*node.operand, frame);
            CallArgs args = eval_args(node.args, frame);
            at_ = expr.pos;
            if (!has_test(node.name)) fail("no test named '" + node.name + "'");
            return Value::boolean(apply_test(*this, node.name, operand, args));
        }
        case ExprKind::unary: {
            const auto& node = static_cast<const Unary&>(expr);
            const Value operand = eval(*node.operand, frame);
            at_ = expr.pos;
            if (node.op == UnaryOp::not_) return Value::boolean(!truthy(operand));
            return unary_op(node.op, operand);
        }
        case ExprKind::binary: {
            const auto& node = static_cast<const Binary&>(expr);
            Value left = eval(*node.left, frame);
            if (node.op == BinaryOp::and_) return truthy(left) ? eval(*node.right, frame) : left;
            if (node.op == BinaryOp::or_) return truthy(left) ? left : eval(*node.right, frame);
            const Value right = eval(*node.right, frame);
            at_ = expr.pos;
            return binary_op(node.op, left, right, budget_);
        }
        case ExprKind::concat: {
            const auto& node = static_cast<const Concat&>(expr);
            std::string out;
            for (const ExprPtr& part : node.parts) {
                const Value v = eval(*part, frame);
                append_str(out, v, budget_);
                budget_.check_size(out.size());
            }
            budget_.charge_bytes(out.size());
            return Value::text(std::move(out));
        }
        case ExprKind::compare:
            return eval_compare(static_cast<const Compare&>(expr), frame);
        case ExprKind::cond: {
            const auto& node = static_cast<const CondExpr&>(expr);
            if (truthy(eval(*node.cond, frame))) return eval(*node.then, frame);
            if (node.otherwise) return eval(*node.otherwise, frame);
            return Value::undefined("the inline if-expression evaluated to false and has no else section");
        }
    }
    return Value();
}

// ---------------------------------------------------------------------------------------------------------------
// Attribute and item access (the sandbox: only data, namespaces, loops and known methods)

Value Interpreter::get_attr(const Value& obj, std::string_view name) {
    if (obj.is_undefined()) fail(obj.undefined_message());
    if (obj.is_object()) {
        Value out;
        if (obj.object().attribute(name, *this, out)) return out;
        return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + std::string(name) + "'");
    }
    if (has_method(obj, name)) return Value::make_object(std::make_shared<BoundMethod>(obj, std::string(name)));
    if (obj.is_dict()) {
        if (const Value* v = obj.dict().find(name)) return *v;
    }
    return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + std::string(name) + "'");
}

Value Interpreter::get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) fail(obj.undefined_message());
    auto no_element = [&] {
        std::string shown;
        append_repr(shown, key, budget_);
        return Value::undefined(object_type_repr(obj) + " has no element " + shown);
    };
    const bool int_key = key.is_int() || key.is_bool();
    if (obj.is_list() && int_key) {
        const auto& items = obj.list().items;
        int64_t i = key.to_int();
        const int64_t n = static_cast<int64_t>(items.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) return no_element();
        return items[static_cast<size_t>(i)];
    }
    if (obj.is_string() && int_key) {
        const std::string& s = obj.str();
        const auto cps = unicode::boundaries(s);
        const int64_t n = static_cast<int64_t>(cps.size() - 1);
        int64_t i = key.to_int();
        if (i < 0) i += n;
        if (i < 0 || i >= n) return no_element();
        return Value::text(
            s.substr(cps[static_cast<size_t>(i)], cps[static_cast<size_t>(i) + 1] - cps[static_cast<size_t>(i)]));
    }
    if (obj.is_dict()) {
        if (const Value* v = obj.dict().find(key)) return *v;
    }
    if (key.is_string()) {
        if (obj.is_dict() && !has_method(obj, key.str()))
            return Value::undefined("'dict object' has no attribute '" + key.str() + "'");
        return get_attr(obj, key.str());
    }
    return no_element();
}

std::vector<Value> Interpreter::iterate(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::undefined:
            return {};
        case Value::Kind::list:
            budget_.step(v.list().items.size());
            return v.list().items;
        case Value::Kind::dict: {
            std::vector<Value> keys;
            keys.reserve(v.dict().entries.size());
            for (const auto& [k, item] : v.dict().entries) keys.push_back(k);
            budget_.step(keys.size());
            return keys;
        }
        case Value::Kind::string: {
            const std::string& s = v.str();
            std::vector<Value> chars;
            budget_.step(s.size());
            for (size_t i = 0; i < s.size();) {
                const size_t start = i;
                unicode::next(s, i);
                chars.push_back(Value::text(s.substr(start, i - start)));
            }
            return chars;
        }
        default:
            fail("'" + type_name(v) + "' object is not iterable");
    }
}

}  // namespace ember::chat::jinja
