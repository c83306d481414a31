// SPDX-License-Identifier: MIT
// Where each name of a scope comes from, decided before rendering as jinja2 does.
#include "jinja/scopes.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>

namespace ember::chat::jinja {

namespace {

// The names of one scope as jinja2 tracks them while it walks the scope's statements in order.
struct Symbols {
    const Symbols* parent = nullptr;
    std::set<std::string> refs;       // names this scope has its own slot for
    std::set<std::string> stores;     // names assigned in this scope
    std::set<std::string> undefined;  // slots that start undefined

    bool knows(const std::string& name) const {
        for (const Symbols* s = this; s; s = s->parent)
            if (s->refs.count(name)) return true;
        return false;
    }
    void load(const std::string& name) {
        if (!knows(name)) refs.insert(name);  // looked up by name at scope entry
    }
    void store(const std::string& name) {
        stores.insert(name);
        if (refs.count(name)) return;
        refs.insert(name);
        if (!(parent && parent->knows(name))) undefined.insert(name);  // otherwise an alias of the outer slot
    }
    void parameter(const std::string& name) {
        stores.insert(name);
        refs.insert(name);
        undefined.erase(name);
    }
};

void collect_loads(const Expr* e, Symbols& sym);

void collect_args(const Arguments& args, Symbols& sym) {
    for (const auto& a : args.positional) collect_loads(a.get(), sym);
    for (const auto& [k, a] : args.keywords) collect_loads(a.get(), sym);
    collect_loads(args.star_args.get(), sym);
    collect_loads(args.star_kwargs.get(), sym);
}

void collect_each(std::initializer_list<const Expr*> parts, Symbols& sym) {
    for (const Expr* part : parts) collect_loads(part, sym);
}

// Filters and tests: the operand, then the arguments.
template <typename Node>
void collect_operand_and_args(const Expr* e, Symbols& sym) {
    const auto* n = static_cast<const Node*>(e);
    collect_loads(n->operand.get(), sym);
    collect_args(n->args, sym);
}

void collect_loads(const Expr* e, Symbols& sym) {
    if (!e) return;
    switch (e->kind) {
        case ExprKind::literal:
            return;
        case ExprKind::name:
            sym.load(static_cast<const Name*>(e)->name);
            return;
        case ExprKind::list:
            for (const auto& item : static_cast<const ListExpr*>(e)->items) collect_loads(item.get(), sym);
            return;
        case ExprKind::dict:
            for (const auto& [k, v] : static_cast<const DictExpr*>(e)->items) collect_each({k.get(), v.get()}, sym);
            return;
        case ExprKind::get_attr:
            collect_loads(static_cast<const GetAttr*>(e)->object.get(), sym);
            return;
        case ExprKind::get_item: {
            const auto* n = static_cast<const GetItem*>(e);
            collect_each({n->object.get(), n->key.get()}, sym);
            return;
        }
        case ExprKind::slice: {
            const auto* n = static_cast<const SliceExpr*>(e);
            collect_each({n->object.get(), n->start.get(), n->stop.get(), n->step.get()}, sym);
            return;
        }
        case ExprKind::call: {
            const auto* n = static_cast<const CallExpr*>(e);
            collect_loads(n->callee.get(), sym);
            collect_args(n->args, sym);
            return;
        }
        case ExprKind::filter:
            collect_operand_and_args<FilterExpr>(e, sym);
            return;
        case ExprKind::test:
            collect_operand_and_args<TestExpr>(e, sym);
            return;
        case ExprKind::unary:
            collect_loads(static_cast<const Unary*>(e)->operand.get(), sym);
            return;
        case ExprKind::binary: {
            const auto* n = static_cast<const Binary*>(e);
            collect_each({n->left.get(), n->right.get()}, sym);
            return;
        }
        case ExprKind::concat:
            for (const auto& part : static_cast<const Concat*>(e)->parts) collect_loads(part.get(), sym);
            return;
        case ExprKind::compare: {
            const auto* n = static_cast<const Compare*>(e);
            collect_loads(n->first.get(), sym);
            for (const auto& [op, r] : n->rest) collect_loads(r.get(), sym);
            return;
        }
        case ExprKind::cond: {
            const auto* n = static_cast<const CondExpr*>(e);
            for (const Expr* part : {n->cond.get(), n->then.get(), n->otherwise.get()}) collect_loads(part, sym);
            return;
        }
    }
}

void store_target(const Target& t, Symbols& sym) {
    if (t.kind == Target::Kind::attribute) {
        sym.load(t.names[0]);  // ns.attr = ... reads ns
        return;
    }
    for (const auto& n : t.names) sym.store(n);
}

UndefinedAtEntry sorted(const std::set<std::string>& names) {
    return {names.begin(), names.end()};
}

void analyze_body(Body& body, Symbols& sym);

// A nested scope: its own symbols, parented to the scope around it (complete by then, as in jinja2).
UndefinedAtEntry analyze_scope(Body& body, const Symbols& outer, const std::vector<std::string>& params,
                               const std::vector<const Expr*>& loads = {}) {
    Symbols sym;
    sym.parent = &outer;
    for (const auto& p : params) sym.parameter(p);
    for (const Expr* e : loads) collect_loads(e, sym);
    analyze_body(body, sym);
    return sorted(sym.undefined);
}

// The statements of one scope level, in order; nested scopes are analysed afterwards.
void visit_level(Body& body, Symbols& sym) {
    for (auto& stmt : body) {
        switch (stmt->kind) {
            case StmtKind::print:
                collect_loads(static_cast<PrintStmt&>(*stmt).expr.get(), sym);
                break;
            case StmtKind::if_: {
                auto& node = static_cast<IfStmt&>(*stmt);
                collect_loads(node.branches[0].first.get(), sym);
                // Each branch (the elifs together, as jinja2 nests them) on a copy; names first assigned in a
                // branch are looked up by name, not undefined.
                std::vector<Symbols> branches;
                auto visit_branch = [&](auto&& fn) {
                    Symbols copy = sym;
                    fn(copy);
                    branches.push_back(std::move(copy));
                };
                visit_branch([&](Symbols& s) { visit_level(node.branches[0].second, s); });
                visit_branch([&](Symbols& s) {
                    for (size_t i = 1; i < node.branches.size(); ++i) {
                        collect_loads(node.branches[i].first.get(), s);
                        visit_level(node.branches[i].second, s);
                    }
                });
                visit_branch([&](Symbols& s) { visit_level(node.otherwise, s); });
                std::set<std::string> branch_stores;
                for (const auto& b : branches)
                    for (const auto& n : b.stores)
                        if (!sym.stores.count(n)) branch_stores.insert(n);
                for (const auto& b : branches) {
                    sym.refs.insert(b.refs.begin(), b.refs.end());
                    sym.undefined.insert(b.undefined.begin(), b.undefined.end());
                    sym.stores.insert(b.stores.begin(), b.stores.end());
                }
                for (const auto& n : branch_stores) sym.undefined.erase(n);
                break;
            }
            case StmtKind::for_:
                collect_loads(static_cast<ForStmt&>(*stmt).iter.get(), sym);
                break;
            case StmtKind::set: {
                auto& node = static_cast<SetStmt&>(*stmt);
                collect_loads(node.value.get(), sym);
                store_target(node.target, sym);
                break;
            }
            case StmtKind::set_block:
                store_target(static_cast<SetBlockStmt&>(*stmt).target, sym);
                break;
            case StmtKind::macro:
                sym.store(static_cast<MacroStmt&>(*stmt).name);
                break;
            case StmtKind::call_block:
                collect_loads(static_cast<CallBlockStmt&>(*stmt).call.get(), sym);
                break;
            case StmtKind::filter_block:
                collect_loads(static_cast<FilterBlockStmt&>(*stmt).filter.get(), sym);
                break;
            case StmtKind::with:
                for (auto& [target, value] : static_cast<WithStmt&>(*stmt).assignments) collect_loads(value.get(), sym);
                break;
            default:
                break;
        }
    }
}

void analyze_nested(Body& body, const Symbols& sym);

void analyze_macro(MacroStmt& m, const Symbols& outer) {
    std::vector<std::string> params;
    std::vector<const Expr*> defaults;
    for (const auto& p : m.params) {
        params.push_back(p.name);
        if (p.default_value) defaults.push_back(p.default_value.get());
    }
    for (const char* special : {"varargs", "kwargs", "caller"}) params.emplace_back(special);
    m.body_undefined = analyze_scope(m.body, outer, params, defaults);
}

// Scopes opened by the statements of one level (including those inside its if-branches).
void analyze_nested(Body& body, const Symbols& sym) {
    for (auto& stmt : body) {
        switch (stmt->kind) {
            case StmtKind::if_: {
                auto& node = static_cast<IfStmt&>(*stmt);
                for (auto& [cond, b] : node.branches) analyze_nested(b, sym);
                analyze_nested(node.otherwise, sym);
                break;
            }
            case StmtKind::for_: {
                auto& node = static_cast<ForStmt&>(*stmt);
                std::vector<std::string> params = node.target.names;
                params.emplace_back("loop");
                node.body_undefined = analyze_scope(node.body, sym, params);
                node.otherwise_undefined = analyze_scope(node.otherwise, sym, {});
                break;
            }
            case StmtKind::set_block: {
                auto& node = static_cast<SetBlockStmt&>(*stmt);
                node.body_undefined = analyze_scope(node.body, sym, {});
                break;
            }
            case StmtKind::macro:
                analyze_macro(static_cast<MacroStmt&>(*stmt), sym);
                break;
            case StmtKind::call_block:
                analyze_macro(static_cast<CallBlockStmt&>(*stmt).caller, sym);
                break;
            case StmtKind::filter_block: {
                auto& node = static_cast<FilterBlockStmt&>(*stmt);
                node.body_undefined = analyze_scope(node.body, sym, {});
                break;
            }
            case StmtKind::with: {
                auto& node = static_cast<WithStmt&>(*stmt);
                std::vector<std::string> params;
                for (const auto& [target, value] : node.assignments)
                    params.insert(params.end(), target.names.begin(), target.names.end());
                node.body_undefined = analyze_scope(node.body, sym, params);
                break;
            }
            default:
                break;
        }
    }
}

void analyze_body(Body& body, Symbols& sym) {
    visit_level(body, sym);
    analyze_nested(body, sym);
}

}  // namespace

void analyze_scopes(Program& program) {
    Symbols root;
    analyze_body(program.body, root);
    program.body_undefined = sorted(root.undefined);
}

}  // namespace ember::chat::jinja
