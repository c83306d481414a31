// SPDX-License-Identifier: MIT
// ember::chat::Template: parsing and rendering, with every internal failure turned into one located line.
#include <cstdio>
#include <ctime>
#include <new>

#include "jinja/ast.h"
#include "jinja/budget.h"
#include "jinja/interpreter.h"
#include "jinja/lexer.h"
#include "jinja/parser.h"
#include "jinja/scopes.h"
#include "jinja/unicode.h"
#include "ember/chat.h"

namespace ember::chat {

namespace {

std::string location(const std::string& name, const std::string& source, size_t pos) {
    pos = std::min(pos, source.size());
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < pos; ++i) {
        if (source[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    }
    const size_t col = 1 + unicode::length(std::string_view(source).substr(line_start, pos - line_start));
    return name + ":" + std::to_string(line) + ":" + std::to_string(col);
}

// Messages quote template text and data, which may hold line breaks: control characters are escaped so that
// every error stays one line.
std::string one_line(std::string_view message) {
    std::string out;
    out.reserve(message.size());
    for (char c : message) {
        const auto b = static_cast<unsigned char>(c);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (b < 0x20 || b == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", b);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

std::tm to_tm(std::optional<std::chrono::local_seconds> now) {
    std::tm tm{};
    if (!now) {
        const std::time_t t = std::time(nullptr);
        localtime_r(&t, &tm);
        return tm;
    }
    using namespace std::chrono;
    const local_days day = floor<days>(*now);
    const year_month_day ymd{day};
    const hh_mm_ss<seconds> time{*now - day};
    tm.tm_year = static_cast<int>(ymd.year()) - 1900;
    tm.tm_mon = static_cast<int>(static_cast<unsigned>(ymd.month())) - 1;
    tm.tm_mday = static_cast<int>(static_cast<unsigned>(ymd.day()));
    tm.tm_hour = static_cast<int>(time.hours().count());
    tm.tm_min = static_cast<int>(time.minutes().count());
    tm.tm_sec = static_cast<int>(time.seconds().count());
    tm.tm_wday = static_cast<int>(weekday{day}.c_encoding());
    tm.tm_yday = static_cast<int>((day - local_days{ymd.year() / January / 1}).count());
    tm.tm_isdst = 0;
    return tm;
}

std::string resource_failure(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e)) return "out of memory";
    return std::string("internal error (") + e.what() + ")";
}

}  // namespace

Template Template::parse(std::string source, std::string name) {
    auto program = std::make_shared<jinja::Program>();
    program->name = std::move(name);
    if (const size_t bad = unicode::find_invalid(source); bad != std::string::npos)
        throw Error(one_line(location(program->name, source, bad) + ": invalid UTF-8 in the template"));
    program->source = jinja::normalize_source(source);
    try {
        program->body = jinja::parse(jinja::tokenize(program->source));
        jinja::analyze_scopes(*program);
    } catch (const jinja::SyntaxError& e) {
        throw Error(one_line(location(program->name, program->source, e.pos) + ": " + e.message));
    } catch (const std::exception& e) {
        throw Error(one_line(program->name + ": cannot parse the template: " + resource_failure(e)));
    }
    return Template(std::move(program));
}

const std::string& Template::name() const {
    return program_->name;
}

const std::string& Template::source() const {
    return program_->source;
}

std::string Template::render(const nlohmann::ordered_json& variables, const Limits& limits,
                             std::optional<std::chrono::local_seconds> now) const {
    const jinja::Program& program = *program_;
    if (!variables.is_object() && !variables.is_null())
        throw Error(program.name + ": the template variables must be a JSON object");
    jinja::Budget budget(limits);
    jinja::Value values;
    try {
        values = variables.is_null() ? jinja::Value::make_dict() : jinja::from_json(variables, budget, "the variables");
    } catch (const jinja::Failure& f) {
        throw Error(one_line(program.name + ": " + f.what()));
    }
    jinja::Interpreter interp(program, budget, to_tm(now));
    try {
        return interp.render(values);
    } catch (const jinja::Failure& f) {
        if (f.kind() == jinja::Failure::Kind::raised) throw Error(one_line(program.name + ": " + f.what()));
        throw Error(one_line(location(program.name, program.source, interp.position()) + ": " + f.what()));
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        // The budget refuses every blow-up it can foresee; this is the last line, so that a failed allocation
        // still ends the render with one located line and never escapes as an abort.
        throw Error(one_line(location(program.name, program.source, interp.position()) + ": " + resource_failure(e)));
    }
}

}  // namespace ember::chat
