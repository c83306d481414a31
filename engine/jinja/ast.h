// SPDX-License-Identifier: MIT
// The syntax tree of a parsed template. Every node keeps the byte offset it came from, for error messages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/jinja_value.h"

namespace ember::chat::jinja {

// ---------------------------------------------------------------------------------------------------------------
// Expressions

enum class ExprKind : uint8_t {
    literal,
    name,
    list,
    dict,
    get_attr,
    get_item,
    slice,
    call,
    filter,
    test,
    unary,
    binary,
    concat,
    compare,
    cond
};

struct Expr {
    ExprKind kind;
    uint32_t pos;
    Expr(ExprKind k, uint32_t p) : kind(k), pos(p) {}
    virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Arguments {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> keywords;
    ExprPtr star_args;    // *args
    ExprPtr star_kwargs;  // **kwargs
};

struct Literal : Expr {
    Value value;
    Literal(uint32_t p, Value v) : Expr(ExprKind::literal, p), value(std::move(v)) {}
};

struct Name : Expr {
    std::string name;
    Name(uint32_t p, std::string n) : Expr(ExprKind::name, p), name(std::move(n)) {}
};

struct ListExpr : Expr {  // [a, b] and (a, b)
    std::vector<ExprPtr> items;
    bool tuple;
    ListExpr(uint32_t p, bool t) : Expr(ExprKind::list, p), tuple(t) {}
};

struct DictExpr : Expr {
    std::vector<std::pair<ExprPtr, ExprPtr>> items;
    explicit DictExpr(uint32_t p) : Expr(ExprKind::dict, p) {}
};

struct GetAttr : Expr {  // a.b
    ExprPtr object;
    std::string attr;
    GetAttr(uint32_t p, ExprPtr o, std::string a)
        : Expr(ExprKind::get_attr, p), object(std::move(o)), attr(std::move(a)) {}
};

struct GetItem : Expr {  // a[b]
    ExprPtr object, key;
    GetItem(uint32_t p, ExprPtr o, ExprPtr k) : Expr(ExprKind::get_item, p), object(std::move(o)), key(std::move(k)) {}
};

struct SliceExpr : Expr {  // a[start:stop:step]
    ExprPtr object, start, stop, step;
    explicit SliceExpr(uint32_t p) : Expr(ExprKind::slice, p) {}
};

struct CallExpr : Expr {
    ExprPtr callee;
    Arguments args;
    explicit CallExpr(uint32_t p) : Expr(ExprKind::call, p) {}
};

// operand|name(args). In {% filter %} and {% set x | f %} blocks the innermost operand is null: the block's
// output goes there.
struct FilterExpr : Expr {
    ExprPtr operand;
    std::string name;
    Arguments args;
    FilterExpr(uint32_t p, std::string n) : Expr(ExprKind::filter, p), name(std::move(n)) {}
};

struct TestExpr : Expr {  // operand is name(args)
    ExprPtr operand;
    std::string name;
    Arguments args;
    TestExpr(uint32_t p, std::string n) : Expr(ExprKind::test, p), name(std::move(n)) {}
};

enum class UnaryOp : uint8_t { neg, pos, not_ };
struct Unary : Expr {
    UnaryOp op;
    ExprPtr operand;
    Unary(uint32_t p, UnaryOp o, ExprPtr e) : Expr(ExprKind::unary, p), op(o), operand(std::move(e)) {}
};

enum class BinaryOp : uint8_t { add, sub, mul, div, floordiv, mod, pow, and_, or_ };
struct Binary : Expr {
    BinaryOp op;
    ExprPtr left, right;
    Binary(uint32_t p, BinaryOp o, ExprPtr l, ExprPtr r)
        : Expr(ExprKind::binary, p), op(o), left(std::move(l)), right(std::move(r)) {}
};

struct Concat : Expr {  // a ~ b ~ c
    std::vector<ExprPtr> parts;
    explicit Concat(uint32_t p) : Expr(ExprKind::concat, p) {}
};

enum class CompareOp : uint8_t { eq, ne, lt, le, gt, ge, in, not_in };
struct Compare : Expr {  // a < b <= c
    ExprPtr first;
    std::vector<std::pair<CompareOp, ExprPtr>> rest;
    Compare(uint32_t p, ExprPtr f) : Expr(ExprKind::compare, p), first(std::move(f)) {}
};

struct CondExpr : Expr {  // then if cond else otherwise
    ExprPtr cond, then, otherwise;
    explicit CondExpr(uint32_t p) : Expr(ExprKind::cond, p) {}
};

// ---------------------------------------------------------------------------------------------------------------
// Statements

enum class StmtKind : uint8_t {
    text,
    print,
    if_,
    for_,
    set,
    set_block,
    macro,
    call_block,
    filter_block,
    with,
    break_,
    continue_
};

struct Stmt {
    StmtKind kind;
    uint32_t pos;
    Stmt(StmtKind k, uint32_t p) : kind(k), pos(p) {}
    virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// Where an assignment stores: a name, a tuple of names (unpacking), or a namespace attribute (ns.attr).
struct Target {
    enum class Kind : uint8_t { name, tuple, attribute } kind = Kind::name;
    std::vector<std::string> names;  // one for name and attribute, several for tuple
    std::string attr;
    uint32_t pos = 0;
};

struct Param {
    std::string name;
    ExprPtr default_value;  // may be null
};

struct TextStmt : Stmt {
    std::string text;
    TextStmt(uint32_t p, std::string t) : Stmt(StmtKind::text, p), text(std::move(t)) {}
};

struct PrintStmt : Stmt {
    ExprPtr expr;
    PrintStmt(uint32_t p, ExprPtr e) : Stmt(StmtKind::print, p), expr(std::move(e)) {}
};

struct IfStmt : Stmt {
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body otherwise;
    explicit IfStmt(uint32_t p) : Stmt(StmtKind::if_, p) {}
};

// Names a scope assigns before reading them start out undefined in that scope (and the scopes inside it),
// whatever outer scopes hold: jinja2's compile-time scoping, computed by analyze_scopes().
using UndefinedAtEntry = std::vector<std::string>;

struct ForStmt : Stmt {
    Target target;
    ExprPtr iter, filter;
    bool recursive = false;
    Body body, otherwise;
    UndefinedAtEntry body_undefined, otherwise_undefined;
    explicit ForStmt(uint32_t p) : Stmt(StmtKind::for_, p) {}
};

struct SetStmt : Stmt {
    Target target;
    ExprPtr value;
    explicit SetStmt(uint32_t p) : Stmt(StmtKind::set, p) {}
};

struct SetBlockStmt : Stmt {
    Target target;
    ExprPtr filter;  // may be null
    Body body;
    UndefinedAtEntry body_undefined;
    explicit SetBlockStmt(uint32_t p) : Stmt(StmtKind::set_block, p) {}
};

struct MacroStmt : Stmt {
    std::string name;
    std::vector<Param> params;
    Body body;
    bool uses_varargs = false, uses_kwargs = false, uses_caller = false;
    UndefinedAtEntry body_undefined;
    explicit MacroStmt(uint32_t p) : Stmt(StmtKind::macro, p) {}
};

struct CallBlockStmt : Stmt {
    MacroStmt caller;  // the block body as an anonymous macro named "caller"
    ExprPtr call;      // a CallExpr
    explicit CallBlockStmt(uint32_t p) : Stmt(StmtKind::call_block, p), caller(p) {}
};

struct FilterBlockStmt : Stmt {
    ExprPtr filter;
    Body body;
    UndefinedAtEntry body_undefined;
    explicit FilterBlockStmt(uint32_t p) : Stmt(StmtKind::filter_block, p) {}
};

struct WithStmt : Stmt {
    std::vector<std::pair<Target, ExprPtr>> assignments;
    Body body;
    UndefinedAtEntry body_undefined;
    explicit WithStmt(uint32_t p) : Stmt(StmtKind::with, p) {}
};

struct LoopControlStmt : Stmt {
    explicit LoopControlStmt(uint32_t p, bool is_break) : Stmt(is_break ? StmtKind::break_ : StmtKind::continue_, p) {}
};

struct Program {
    std::string name;
    std::string source;  // normalised, for positions in messages
    Body body;
    UndefinedAtEntry body_undefined;
};

}  // namespace ember::chat::jinja
