// SPDX-License-Identifier: MIT
// Jinja's grammar (as jinja2 3.1 parses it) over the lexer's tokens, into the syntax tree of ast.h.
#pragma once

#include <string>
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"

namespace ember::chat::jinja {

// Throws SyntaxError. Statements that would load other templates (include, import, extends, block) are refused.
Body parse(std::vector<Token> tokens);

}  // namespace ember::chat::jinja
