// SPDX-License-Identifier: MIT
// Jinja's grammar over the lexer's tokens, into the syntax tree of ast.h.
#include "jinja/parser.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <utility>
#include <string_view>

namespace ember::chat::jinja {

namespace {

// Deeper nesting than this is refused at parse time, far above what real templates use (jinja2 itself stops
// near 100 nested parentheses on Python's recursion limit) and well inside the native stack.
constexpr int max_nesting = 128;

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

    Body parse_template() {
        Body body = subparse({});
        if (cur().type != Tok::eof) error(cur(), "unexpected " + describe(cur()));
        return body;
    }

private:
    // --- token stream ------------------------------------------------------------------------------------------

    const Token& cur() const { return t_[i_]; }
    const Token& look(size_t n = 1) const { return t_[std::min(i_ + n, t_.size() - 1)]; }
    void advance() {
        if (i_ + 1 < t_.size()) ++i_;
    }
    bool is_op(std::string_view op) const { return cur().type == Tok::op && cur().text == op; }
    bool is_name(std::string_view n) const { return cur().type == Tok::name && cur().text == n; }
    bool skip_op(std::string_view op) {
        if (!is_op(op)) return false;
        advance();
        return true;
    }
    bool skip_name(std::string_view n) {
        if (!is_name(n)) return false;
        advance();
        return true;
    }
    [[noreturn]] void error(const Token& at, std::string message) const {
        throw SyntaxError{at.pos, std::move(message)};
    }
    void expect_op(std::string_view op) {
        if (!skip_op(op)) error(cur(), "expected '" + std::string(op) + "', got " + describe(cur()));
    }
    void expect(Tok type, std::string_view what) {
        if (cur().type != type) error(cur(), "expected " + std::string(what) + ", got " + describe(cur()));
        advance();
    }
    std::string expect_name() {
        if (cur().type != Tok::name) error(cur(), "expected a name, got " + describe(cur()));
        std::string n = cur().text;
        advance();
        return n;
    }

    class Nesting {
    public:
        Nesting(Parser& p, const Token& at) : p_(p) {
            if (++p_.nesting_ > max_nesting)
                p_.error(at, "expression or block nested deeper than " + std::to_string(max_nesting) + " levels");
        }
        ~Nesting() { --p_.nesting_; }
        Nesting(const Nesting&) = delete;
        Nesting& operator=(const Nesting&) = delete;

    private:
        Parser& p_;
    };

    // --- statements --------------------------------------------------------------------------------------------

    // Parses template data, prints and statements until a block whose tag is one of `end_tags`; returns with
    // the current token on that tag name.
    Body subparse(std::initializer_list<std::string_view> end_tags) {
        Body body;
        while (cur().type != Tok::eof) {
            const Token& token = cur();
            if (token.type == Tok::data) {
                body.push_back(std::make_unique<TextStmt>(token.pos, token.text));
                advance();
            } else if (token.type == Tok::var_begin) {
                advance();
                body.push_back(std::make_unique<PrintStmt>(token.pos, parse_tuple(false, true, {}, false)));
                expect(Tok::var_end, "end of print statement ('}}')");
            } else if (token.type == Tok::block_begin) {
                advance();
                if (cur().type == Tok::name &&
                    std::find(end_tags.begin(), end_tags.end(), cur().text) != end_tags.end())
                    return body;
                parse_statement(body);
                expect(Tok::block_end, "end of statement block ('%}')");
            } else {
                error(token, "unexpected " + describe(token));
            }
        }
        if (end_tags.size() > 0) {
            std::string names;
            for (auto tag : end_tags) names += (names.empty() ? "'" : " or '") + std::string(tag) + "'";
            error(cur(), "unexpected end of template, expected " + names);
        }
        return body;
    }

    // After the statement's own tokens: optional ':' then '%}', then the body until one of the end tags.
    Body parse_block_body(std::initializer_list<std::string_view> end_tags) {
        skip_op(":");
        expect(Tok::block_end, "end of statement block ('%}')");
        return subparse(end_tags);
    }

    void expect_end_tag(std::string_view tag) {
        if (!skip_name(tag)) error(cur(), "expected '" + std::string(tag) + "'");
    }

    void parse_statement(Body& body) {
        const Token& token = cur();
        if (token.type != Tok::name) error(token, "tag name expected");
        Nesting nest(*this, token);
        const std::string tag = token.text;
        if (tag == "if") return body.push_back(parse_if());
        if (tag == "for") return body.push_back(parse_for());
        if (tag == "set") return body.push_back(parse_set());
        if (tag == "macro") return body.push_back(parse_macro());
        if (tag == "call") return body.push_back(parse_call_block());
        if (tag == "filter") return body.push_back(parse_filter_block());
        if (tag == "with") return body.push_back(parse_with());
        if (tag == "print") {
            advance();
            bool first = true;
            while (cur().type != Tok::block_end) {
                if (!first) expect_op(",");
                first = false;
                body.push_back(std::make_unique<PrintStmt>(cur().pos, parse_expression(true)));
            }
            return;
        }
        if (tag == "break" || tag == "continue") {
            if (loop_depth_ == 0) error(token, "'" + tag + "' outside of a loop");
            advance();
            return body.push_back(std::make_unique<LoopControlStmt>(token.pos, tag == "break"));
        }
        if (tag == "include" || tag == "import" || tag == "from" || tag == "extends" || tag == "block")
            error(token, "'" + tag + "' is not allowed: templates are sandboxed and cannot load other templates");
        if (tag == "endif" || tag == "endfor" || tag == "endset" || tag == "endmacro" || tag == "endcall" ||
            tag == "endfilter" || tag == "endwith" || tag == "elif" || tag == "else")
            error(token, "unexpected '" + tag + "'");
        error(token, "unknown tag '" + tag + "'");
    }

    StmtPtr parse_if() {
        auto node = std::make_unique<IfStmt>(cur().pos);
        advance();
        while (true) {
            ExprPtr test = parse_tuple(false, false, {}, false);
            Body body = parse_block_body({"elif", "else", "endif"});
            node->branches.emplace_back(std::move(test), std::move(body));
            if (skip_name("elif")) continue;
            if (skip_name("else")) {
                node->otherwise = parse_block_body({"endif"});
                expect_end_tag("endif");
            } else {
                expect_end_tag("endif");
            }
            break;
        }
        return node;
    }

    StmtPtr parse_for() {
        auto node = std::make_unique<ForStmt>(cur().pos);
        advance();
        node->target = parse_target(false, {"in"});
        if (!skip_name("in")) error(cur(), "expected 'in', got " + describe(cur()));
        node->iter = parse_tuple(false, false, {"recursive"}, false);
        if (skip_name("if")) node->filter = parse_expression(true);
        node->recursive = skip_name("recursive");
        ++loop_depth_;
        node->body = parse_block_body({"endfor", "else"});
        --loop_depth_;
        if (skip_name("else")) {
            node->otherwise = parse_block_body({"endfor"});
        }
        expect_end_tag("endfor");
        return node;
    }

    StmtPtr parse_set() {
        const uint32_t pos = cur().pos;
        advance();
        Target target = parse_target(true, {});
        if (skip_op("=")) {
            auto node = std::make_unique<SetStmt>(pos);
            node->target = std::move(target);
            node->value = parse_tuple(false, true, {}, false);
            return node;
        }
        auto node = std::make_unique<SetBlockStmt>(pos);
        node->target = std::move(target);
        if (is_op("|")) {
            advance();
            node->filter = parse_filter_chain(nullptr);
        }
        node->body = parse_block_body({"endset"});
        expect_end_tag("endset");
        return node;
    }

    void parse_signature(MacroStmt& macro) {
        expect_op("(");
        while (!is_op(")")) {
            if (!macro.params.empty()) expect_op(",");
            Param p;
            p.name = expect_name();
            if (skip_op("=")) {
                p.default_value = parse_expression(true);
            } else if (!macro.params.empty() && macro.params.back().default_value) {
                error(cur(), "non-default argument follows default argument");
            }
            macro.params.push_back(std::move(p));
        }
        expect_op(")");
    }

    StmtPtr parse_macro() {
        auto node = std::make_unique<MacroStmt>(cur().pos);
        advance();
        node->name = expect_name();
        parse_signature(*node);
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        macros_.push_back(node.get());
        node->body = parse_block_body({"endmacro"});
        macros_.pop_back();
        loop_depth_ = saved_loops;
        expect_end_tag("endmacro");
        return node;
    }

    StmtPtr parse_call_block() {
        auto node = std::make_unique<CallBlockStmt>(cur().pos);
        advance();
        node->caller.name = "caller";
        if (is_op("(")) parse_signature(node->caller);
        const Token& at = cur();
        node->call = parse_expression(true);
        if (node->call->kind != ExprKind::call) error(at, "expected a call after 'call'");
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        macros_.push_back(&node->caller);
        node->caller.body = parse_block_body({"endcall"});
        macros_.pop_back();
        loop_depth_ = saved_loops;
        expect_end_tag("endcall");
        return node;
    }

    StmtPtr parse_filter_block() {
        auto node = std::make_unique<FilterBlockStmt>(cur().pos);
        advance();
        node->filter = parse_filter_chain(nullptr);
        node->body = parse_block_body({"endfilter"});
        expect_end_tag("endfilter");
        return node;
    }

    StmtPtr parse_with() {
        auto node = std::make_unique<WithStmt>(cur().pos);
        advance();
        while (cur().type != Tok::block_end) {
            if (!node->assignments.empty()) expect_op(",");
            Target target = parse_target(false, {});
            expect_op("=");
            node->assignments.emplace_back(std::move(target), parse_expression(true));
        }
        node->body = parse_block_body({"endwith"});
        expect_end_tag("endwith");
        return node;
    }

    // name | name, name, ... | (name, name) | ns.attr (with_namespace)
    Target parse_target(bool with_namespace, std::initializer_list<std::string_view> end_names) {
        Target target;
        target.pos = cur().pos;
        auto at_end = [&] {
            if (cur().type == Tok::block_end || cur().type == Tok::var_end || is_op(")") || is_op("=")) return true;
            return cur().type == Tok::name &&
                   std::find(end_names.begin(), end_names.end(), cur().text) != end_names.end();
        };
        bool parenthesised = false;
        if (is_op("(")) {
            parenthesised = true;
            advance();
        }
        bool comma = false;
        while (true) {
            if (cur().type != Tok::name) error(cur(), "can't assign to " + describe(cur()));
            const std::string n = cur().text;
            if (n == "true" || n == "false" || n == "none" || n == "True" || n == "False" || n == "None")
                error(cur(), "can't assign to a constant");
            advance();
            if (with_namespace && !comma && is_op(".")) {
                advance();
                target.kind = Target::Kind::attribute;
                target.names.push_back(n);
                target.attr = expect_name();
                return target;
            }
            target.names.push_back(n);
            if (!is_op(",")) break;
            advance();
            comma = true;
            if (parenthesised ? is_op(")") : at_end()) break;
        }
        if (parenthesised) expect_op(")");
        target.kind = comma ? Target::Kind::tuple : Target::Kind::name;
        return target;
    }

    // --- expressions -------------------------------------------------------------------------------------------

    ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

    ExprPtr parse_condexpr() {
        ExprPtr expr = parse_or();
        while (is_name("if")) {
            const uint32_t pos = cur().pos;
            advance();
            auto node = std::make_unique<CondExpr>(pos);
            node->cond = parse_or();
            node->then = std::move(expr);
            if (skip_name("else")) node->otherwise = parse_condexpr();
            expr = std::move(node);
        }
        return expr;
    }

    // A left-associative level: operands from next(), joined while op_at() finds an operator at the current token.
    template <typename Next, typename OpAt>
    ExprPtr parse_left_assoc(Next next, OpAt op_at) {
        ExprPtr left = next();
        for (std::optional<BinaryOp> op = op_at(); op; op = op_at()) {
            const uint32_t pos = cur().pos;
            advance();
            left = std::make_unique<Binary>(pos, *op, std::move(left), next());
        }
        return left;
    }

    // `op` when the current token is the keyword `name` (and, or).
    std::optional<BinaryOp> keyword_operator(std::string_view name, BinaryOp op) const {
        return is_name(name) ? std::optional<BinaryOp>(op) : std::nullopt;
    }

    // The operator of `table` whose symbol is the current token.
    std::optional<BinaryOp> symbol_operator(std::initializer_list<std::pair<std::string_view, BinaryOp>> table) const {
        for (const auto& [symbol, op] : table)
            if (is_op(symbol)) return op;
        return std::nullopt;
    }

    ExprPtr parse_or() {
        return parse_left_assoc([&] { return parse_and(); }, [&] { return keyword_operator("or", BinaryOp::or_); });
    }

    ExprPtr parse_and() {
        return parse_left_assoc([&] { return parse_not(); }, [&] { return keyword_operator("and", BinaryOp::and_); });
    }

    ExprPtr parse_not() {
        if (is_name("not")) {
            const Token& at = cur();
            Nesting nest(*this, at);
            advance();
            return std::make_unique<Unary>(at.pos, UnaryOp::not_, parse_not());
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        const uint32_t pos = cur().pos;
        ExprPtr expr = parse_math1();
        std::unique_ptr<Compare> node;
        while (true) {
            CompareOp op;
            if (cur().type == Tok::op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                          cur().text == "<=" || cur().text == ">" || cur().text == ">=")) {
                const std::string& s = cur().text;
                op = s == "=="   ? CompareOp::eq
                     : s == "!=" ? CompareOp::ne
                     : s == "<"  ? CompareOp::lt
                     : s == "<=" ? CompareOp::le
                     : s == ">"  ? CompareOp::gt
                                 : CompareOp::ge;
                advance();
            } else if (is_name("in")) {
                op = CompareOp::in;
                advance();
            } else if (is_name("not") && look().type == Tok::name && look().text == "in") {
                op = CompareOp::not_in;
                advance();
                advance();
            } else {
                break;
            }
            if (!node) node = std::make_unique<Compare>(pos, std::move(expr));
            node->rest.emplace_back(op, parse_math1());
        }
        if (node) return node;
        return expr;
    }

    ExprPtr parse_math1() {
        return parse_left_assoc([&] { return parse_concat(); },
                                [&] { return symbol_operator({{"+", BinaryOp::add}, {"-", BinaryOp::sub}}); });
    }

    ExprPtr parse_concat() {
        const uint32_t pos = cur().pos;
        ExprPtr first = parse_math2();
        if (!is_op("~")) return first;
        auto node = std::make_unique<Concat>(pos);
        node->parts.push_back(std::move(first));
        while (skip_op("~")) node->parts.push_back(parse_math2());
        return node;
    }

    ExprPtr parse_math2() {
        return parse_left_assoc([&] { return parse_pow(); }, [&] {
            return symbol_operator(
                {{"*", BinaryOp::mul}, {"/", BinaryOp::div}, {"//", BinaryOp::floordiv}, {"%", BinaryOp::mod}});
        });
    }

    ExprPtr parse_pow() {
        return parse_left_assoc([&] { return parse_unary(true); },
                                [&] { return symbol_operator({{"**", BinaryOp::pow}}); });
    }

    ExprPtr parse_unary(bool with_filter) {
        const Token& at = cur();
        Nesting nest(*this, at);
        ExprPtr node;
        if (is_op("-")) {
            advance();
            node = std::make_unique<Unary>(at.pos, UnaryOp::neg, parse_unary(false));
        } else if (is_op("+")) {
            advance();
            node = std::make_unique<Unary>(at.pos, UnaryOp::pos, parse_unary(false));
        } else {
            node = parse_primary();
        }
        node = parse_postfix(std::move(node));
        if (with_filter) node = parse_filter_expr(std::move(node));
        return node;
    }

    ExprPtr parse_primary() {
        const Token& token = cur();
        switch (token.type) {
            case Tok::name: {
                advance();
                const std::string& n = token.text;
                if (n == "true" || n == "True") return std::make_unique<Literal>(token.pos, Value::boolean(true));
                if (n == "false" || n == "False") return std::make_unique<Literal>(token.pos, Value::boolean(false));
                if (n == "none" || n == "None") return std::make_unique<Literal>(token.pos, Value::none());
                note_name(n);
                return std::make_unique<Name>(token.pos, n);
            }
            case Tok::string: {
                std::string s = token.text;
                advance();
                while (cur().type == Tok::string) {  // adjacent literals concatenate
                    s += cur().text;
                    advance();
                }
                return std::make_unique<Literal>(token.pos, Value::text(std::move(s)));
            }
            case Tok::integer:
                advance();
                return std::make_unique<Literal>(token.pos, Value::integer(token.integer));
            case Tok::floating:
                advance();
                return std::make_unique<Literal>(token.pos, Value::number(token.floating));
            case Tok::op:
                if (token.text == "(") {
                    advance();
                    ExprPtr inner = parse_tuple(false, true, {}, true);
                    expect_op(")");
                    return inner;
                }
                if (token.text == "[") return parse_list();
                if (token.text == "{") return parse_dict();
                break;
            default:
                break;
        }
        error(token, "unexpected " + describe(token));
    }

    // Expressions separated by commas make a tuple; a single one without a comma stays itself.
    ExprPtr parse_tuple(bool simplified, bool with_condexpr, std::initializer_list<std::string_view> end_names,
                        bool explicit_parens) {
        const uint32_t pos = cur().pos;
        auto at_end = [&] {
            if (cur().type == Tok::var_end || cur().type == Tok::block_end || is_op(")")) return true;
            return cur().type == Tok::name &&
                   std::find(end_names.begin(), end_names.end(), cur().text) != end_names.end();
        };
        std::vector<ExprPtr> items;
        bool is_tuple = false;
        while (true) {
            if (!items.empty()) expect_op(",");
            if (at_end()) break;
            items.push_back(simplified ? parse_primary() : parse_expression(with_condexpr));
            if (is_op(","))
                is_tuple = true;
            else
                break;
        }
        if (!is_tuple) {
            if (!items.empty()) return std::move(items[0]);
            if (!explicit_parens) error(cur(), "expected an expression, got " + describe(cur()));
        }
        auto node = std::make_unique<ListExpr>(pos, true);
        node->items = std::move(items);
        return node;
    }

    ExprPtr parse_list() {
        auto node = std::make_unique<ListExpr>(cur().pos, false);
        expect_op("[");
        while (!is_op("]")) {
            if (!node->items.empty()) expect_op(",");
            if (is_op("]")) break;
            node->items.push_back(parse_expression(true));
        }
        expect_op("]");
        return node;
    }

    ExprPtr parse_dict() {
        auto node = std::make_unique<DictExpr>(cur().pos);
        expect_op("{");
        while (!is_op("}")) {
            if (!node->items.empty()) expect_op(",");
            if (is_op("}")) break;
            ExprPtr key = parse_expression(true);
            expect_op(":");
            node->items.emplace_back(std::move(key), parse_expression(true));
        }
        expect_op("}");
        return node;
    }

    ExprPtr parse_postfix(ExprPtr node) {
        while (true) {
            if (is_op(".") || is_op("[")) {
                node = parse_subscript(std::move(node));
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parse_filter_expr(ExprPtr node) {
        while (true) {
            if (is_op("|")) {
                advance();
                node = parse_filter_chain(std::move(node));
            } else if (is_name("is")) {
                node = parse_test(std::move(node));
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr node) {
        const Token& token = cur();
        Nesting nest(*this, token);
        advance();
        if (token.text == ".") {
            const Token& attr = cur();
            if (attr.type == Tok::name) {
                advance();
                return std::make_unique<GetAttr>(token.pos, std::move(node), attr.text);
            }
            if (attr.type != Tok::integer) error(attr, "expected name or number");
            advance();
            return std::make_unique<GetItem>(token.pos, std::move(node),
                                             std::make_unique<Literal>(attr.pos, Value::integer(attr.integer)));
        }
        // '[': a key or a slice (several comma-separated subscripts make a tuple key)
        std::vector<ExprPtr> keys;
        std::unique_ptr<SliceExpr> slice;
        while (!is_op("]")) {
            if (!keys.empty() || slice) expect_op(",");
            ExprPtr start;
            if (!is_op(":")) {
                start = parse_expression(true);
                if (!is_op(":")) {
                    keys.push_back(std::move(start));
                    continue;
                }
            }
            advance();  // ':'
            if (slice || !keys.empty()) error(token, "only a single slice is supported in a subscript");
            slice = std::make_unique<SliceExpr>(token.pos);
            slice->start = std::move(start);
            if (!is_op("]") && !is_op(",") && !is_op(":")) slice->stop = parse_expression(true);
            if (skip_op(":")) {
                if (!is_op("]") && !is_op(",")) slice->step = parse_expression(true);
            }
        }
        expect_op("]");
        if (slice) {
            if (!keys.empty()) error(token, "only a single slice is supported in a subscript");
            slice->object = std::move(node);
            return slice;
        }
        if (keys.empty()) error(token, "expected subscript expression");
        ExprPtr key;
        if (keys.size() == 1) {
            key = std::move(keys[0]);
        } else {
            auto tuple = std::make_unique<ListExpr>(token.pos, true);
            tuple->items = std::move(keys);
            key = std::move(tuple);
        }
        return std::make_unique<GetItem>(token.pos, std::move(node), std::move(key));
    }

    Arguments parse_call_args() {
        const Token& open = cur();
        expect_op("(");
        Arguments args;
        bool need_comma = false;
        auto ensure = [&](bool ok) {
            if (!ok) error(open, "invalid syntax for function call expression");
        };
        while (!is_op(")")) {
            if (need_comma) {
                expect_op(",");
                if (is_op(")")) break;
            }
            if (is_op("*")) {
                ensure(!args.star_args && !args.star_kwargs);
                advance();
                args.star_args = parse_expression(true);
            } else if (is_op("**")) {
                ensure(!args.star_kwargs);
                advance();
                args.star_kwargs = parse_expression(true);
            } else if (cur().type == Tok::name && look().type == Tok::op && look().text == "=") {
                ensure(!args.star_kwargs);
                std::string key = cur().text;
                advance();
                advance();
                args.keywords.emplace_back(std::move(key), parse_expression(true));
            } else {
                ensure(!args.star_args && !args.star_kwargs && args.keywords.empty());
                args.positional.push_back(parse_expression(true));
            }
            need_comma = true;
        }
        expect_op(")");
        return args;
    }

    ExprPtr parse_call(ExprPtr callee) {
        auto node = std::make_unique<CallExpr>(cur().pos);
        Nesting nest(*this, cur());
        node->callee = std::move(callee);
        node->args = parse_call_args();
        return node;
    }

    // name(args) [| name(args) ...], the leading '|' already consumed.
    ExprPtr parse_filter_chain(ExprPtr operand) {
        while (true) {
            const Token& token = cur();
            Nesting nest(*this, token);
            std::string name = expect_name();
            while (skip_op(".")) name += "." + expect_name();
            auto node = std::make_unique<FilterExpr>(token.pos, std::move(name));
            node->operand = std::move(operand);
            if (is_op("(")) node->args = parse_call_args();
            operand = std::move(node);
            if (!is_op("|")) return operand;
            advance();
        }
    }

    ExprPtr parse_test(ExprPtr operand) {
        const Token& is = cur();
        Nesting nest(*this, is);
        advance();
        const bool negated = skip_name("not");
        std::string name = expect_name();
        while (skip_op(".")) name += "." + expect_name();
        auto node = std::make_unique<TestExpr>(is.pos, std::move(name));
        node->operand = std::move(operand);
        const Token& next = cur();
        if (is_op("(")) {
            node->args = parse_call_args();
        } else if ((next.type == Tok::name || next.type == Tok::string || next.type == Tok::integer ||
                    next.type == Tok::floating || is_op("[") || is_op("{")) &&
                   !(next.type == Tok::name && (next.text == "else" || next.text == "or" || next.text == "and"))) {
            if (is_name("is")) error(next, "you cannot chain multiple tests with 'is'");
            node->args.positional.push_back(parse_postfix(parse_primary()));
        }
        if (negated) return std::make_unique<Unary>(is.pos, UnaryOp::not_, std::move(node));
        return node;
    }

    void note_name(const std::string& n) {
        if (macros_.empty()) return;
        for (MacroStmt* m : macros_) {
            if (n == "varargs") m->uses_varargs = true;
            if (n == "kwargs") m->uses_kwargs = true;
            if (n == "caller") m->uses_caller = true;
        }
    }

    std::vector<Token> t_;
    size_t i_ = 0;
    int nesting_ = 0;
    int loop_depth_ = 0;
    std::vector<MacroStmt*> macros_;
};

}  // namespace

Body parse(std::vector<Token> tokens) {
    return Parser(std::move(tokens)).parse_template();
}

}  // namespace ember::chat::jinja
