// SPDX-License-Identifier: MIT
// jinja2 decides at compile time where each name of a scope comes from. A name that a scope assigns (set,
// macro) before it reads it — and that no enclosing scope knows — is a local of that scope which starts out
// undefined: until the assignment runs, the scope and every scope inside it see it undefined even when the
// template's variables hold that name. Names assigned only inside if-branches are looked up as usual.
#pragma once

#include "jinja/ast.h"

namespace ember::chat::jinja {

// Fills the UndefinedAtEntry lists of the program and of every scope-owning statement.
void analyze_scopes(Program& program);

}  // namespace ember::chat::jinja
