// SPDX-License-Identifier: MIT
// The interpreter's non-data values: namespace(), loop, macros, callers and bound methods.
#include "jinja/objects.h"

#include "jinja/budget.h"
#include "jinja/builtins.h"

namespace ember::chat::jinja {

// --- namespace() -----------------------------------------------------------------------------------------------

bool Namespace::attribute(std::string_view name, Interpreter&, Value& out) {
    const Value* v = attrs_.find(name);
    if (v) out = *v;
    return v != nullptr;
}

void Namespace::set(std::string_view name, Value value) {
    attrs_.set(name, std::move(value));
}

void Namespace::repr(std::string& out, Budget& budget, int depth) const {
    out += "<Namespace {";
    for (size_t i = 0; i < attrs_.size(); ++i) {
        if (i) out += ", ";
        append_string_repr(out, attrs_[i].first);
        out += ": ";
        append_repr(out, attrs_[i].second, budget, depth + 1);
    }
    out += "}>";
}

void Namespace::for_each_child(const std::function<void(const Value&)>& visit) const {
    for (const auto& [n, v] : attrs_) visit(v);
}

void Namespace::release_children_into(std::vector<Value>& out) {
    attrs_.release_into(out);
}

// --- loop ------------------------------------------------------------------------------------------------------

Value LoopContext::call(Interpreter& interp, CallArgs& args) {
    if (args.positional.size() != 1 || !args.keywords.empty()) fail("loop() takes exactly one argument");
    return interp.recurse_loop(*this, args.positional[0]);
}

bool LoopContext::attribute(std::string_view name, Interpreter& interp, Value& out) {
    const auto& items = items_->items;
    const int64_t length = static_cast<int64_t>(items.size());
    const int64_t index0 = static_cast<int64_t>(index0_);
    if (name == "index")
        out = Value::integer(index0 + 1);
    else if (name == "index0")
        out = Value::integer(index0);
    else if (name == "revindex")
        out = Value::integer(length - index0);
    else if (name == "revindex0")
        out = Value::integer(length - index0 - 1);
    else if (name == "first")
        out = Value::boolean(index0 == 0);
    else if (name == "last")
        out = Value::boolean(index0 + 1 == length);
    else if (name == "length")
        out = Value::integer(length);
    else if (name == "depth")
        out = Value::integer(depth0_ + 1);
    else if (name == "depth0")
        out = Value::integer(depth0_);
    else if (name == "previtem")
        out = index0 > 0 ? items[index0_ - 1] : Value::undefined("there is no previous item");
    else if (name == "nextitem")
        out = index0 + 1 < length ? items[index0_ + 1] : Value::undefined("there is no next item");
    else if (name == "cycle" || name == "changed")
        out = Value::make_object(
            std::make_shared<BoundMethod>(Value::make_object(shared_from_this()), std::string(name)));
    else
        return false;
    (void)interp;
    return true;
}

Value LoopContext::call_method(std::string_view name, Interpreter& interp, CallArgs& args) {
    if (name == "cycle") return cycle(args);
    return changed(args, interp.budget());
}

void LoopContext::repr(std::string& out, Budget&, int) const {
    out += "<LoopContext " + std::to_string(index0_ + 1) + "/" + std::to_string(items_->items.size()) + ">";
}

void LoopContext::for_each_child(const std::function<void(const Value&)>& visit) const {
    for (const auto& item : items_->items) visit(item);
    if (last_changed_) visit(*last_changed_);
}

void LoopContext::release_children_into(std::vector<Value>& out) {
    out.push_back(Value::make_list(std::move(items_)));
    if (last_changed_) out.push_back(std::move(*last_changed_));
    last_changed_.reset();
}

Value LoopContext::cycle(CallArgs& args) const {
    if (args.positional.empty()) fail("no items for cycling given");
    return args.positional[index0_ % args.positional.size()];
}

Value LoopContext::changed(CallArgs& args, Budget& budget) {
    Value current = Value::make_list(args.positional, true);
    if (last_changed_ && equal(*last_changed_, current, budget)) return Value::boolean(false);
    last_changed_ = std::move(current);
    return Value::boolean(true);
}

// --- macros ----------------------------------------------------------------------------------------------------

bool Macro::attribute(std::string_view name, Interpreter&, Value& out) {
    if (name == "name") {
        out = Value::text(def_->name);
        return true;
    }
    if (name == "arguments") {
        std::vector<Value> names;
        for (const auto& p : def_->params) names.push_back(Value::text(p.name));
        out = Value::make_list(std::move(names), true);
        return true;
    }
    return false;
}

void Macro::repr(std::string& out, Budget&, int) const {
    out += "<Macro ";
    append_string_repr(out, def_->name);
    out += ">";
}

// --- methods and functions -------------------------------------------------------------------------------------

Value BoundMethod::call(Interpreter& interp, CallArgs& args) {
    if (self_.is_object()) return self_.object().call_method(name_, interp, args);
    return jinja::call_method(interp, self_, name_, args);
}

void BoundMethod::repr(std::string& out, Budget&, int) const {
    out += "<built-in method " + name_ + " of " + jinja::type_name(self_) + " object>";
}

void Builtin::repr(std::string& out, Budget&, int) const {
    out += "<built-in function " + std::string(name_) + ">";
}

bool Cycler::attribute(std::string_view name, Interpreter&, Value& out) {
    if (name == "current") {
        out = items_.empty() ? Value::undefined("the cycler is empty") : items_[pos_];
        return true;
    }
    if (name == "next" || name == "reset") {
        out = Value::make_object(
            std::make_shared<BoundMethod>(Value::make_object(shared_from_this()), std::string(name)));
        return true;
    }
    return false;
}

Value Cycler::call_method(std::string_view name, Interpreter&, CallArgs& args) {
    if (!args.positional.empty() || !args.keywords.empty()) fail(std::string(name) + "() takes no arguments");
    if (name == "next") return next();
    reset();
    return Value::none();
}

void Cycler::for_each_child(const std::function<void(const Value&)>& visit) const {
    for (const auto& item : items_) visit(item);
}

void Cycler::release_children_into(std::vector<Value>& out) {
    for (auto& item : items_) out.push_back(std::move(item));
    items_.clear();
}

Value Cycler::next() {
    if (items_.empty()) fail("the cycler is empty");
    Value v = items_[pos_];
    pos_ = (pos_ + 1) % items_.size();
    return v;
}

Value Joiner::call(Interpreter&, CallArgs& args) {
    if (!args.positional.empty() || !args.keywords.empty()) fail("joiner() takes no arguments");
    if (!used_) {
        used_ = true;
        return Value::text("");
    }
    return Value::text(sep_);
}

}  // namespace ember::chat::jinja
