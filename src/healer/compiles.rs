//! Whether a Python module would compile: it parses (with Ruff's parser, the same grammar and
//! indentation rules as CPython's) and has none of the errors CPython's compiler adds after
//! parsing that decide between two indentations of a line: `return`, `yield` or `await` outside
//! a function, `break` or `continue` outside a loop. A fixer that has several candidates keeps
//! the ones that compile.
//!
//! The files are the repository's, so untrusted: the parser grows its own stack, the walk here
//! grows it too, and the tree (as deep as the file is long) is dropped on a stack sized for its
//! depth, so no file can overflow the stack.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, Stmt};

/// Stack left before the walk grows it, and how much it grows by.
const RED_ZONE: usize = 64 * 1024;
const GROWTH: usize = 1024 * 1024;
/// A generous bound on the stack one level of the tree takes while it is dropped.
const DROP_BYTES_PER_LEVEL: usize = 512;

/// Whether `source` parses as a Python module and has none of the compile errors above.
pub fn compiles(source: &str) -> bool {
    let Ok(parsed) = ruff_python_parser::parse_module(source) else {
        return false;
    };
    let mut scopes = Scopes::default();
    for stmt in &parsed.syntax().body {
        scopes.visit_stmt(stmt);
    }
    let depth = scopes.max_depth;
    stacker::grow(GROWTH + depth * DROP_BYTES_PER_LEVEL, move || drop(parsed));
    !scopes.error
}

#[derive(Default)]
struct Scopes {
    /// Whether the innermost scope is a function (or a lambda), not a class or the module.
    in_function: bool,
    /// Loops open in the innermost scope.
    loops: u32,
    error: bool,
    depth: usize,
    max_depth: usize,
}

impl Scopes {
    /// Runs `f` in a new scope (a function's or a class's body).
    fn scope(&mut self, in_function: bool, f: impl FnOnce(&mut Self)) {
        let saved = (self.in_function, self.loops);
        self.in_function = in_function;
        self.loops = 0;
        f(self);
        (self.in_function, self.loops) = saved;
    }

    fn deeper(&mut self, f: impl FnOnce(&mut Self)) {
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
        stacker::maybe_grow(RED_ZONE, GROWTH, || f(self));
        self.depth -= 1;
    }
}

impl<'a> Visitor<'a> for Scopes {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.deeper(|s| match stmt {
            Stmt::FunctionDef(def) => {
                // Decorators, defaults and annotations run in the enclosing scope.
                for decorator in &def.decorator_list {
                    s.visit_decorator(decorator);
                }
                s.visit_parameters(&def.parameters);
                if let Some(returns) = &def.returns {
                    s.visit_annotation(returns);
                }
                s.scope(true, |s| s.visit_body(&def.body));
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    s.visit_decorator(decorator);
                }
                if let Some(arguments) = &class.arguments {
                    s.visit_arguments(arguments);
                }
                s.scope(false, |s| s.visit_body(&class.body));
            }
            Stmt::Return(_) if !s.in_function => s.error = true,
            Stmt::Break(_) | Stmt::Continue(_) if s.loops == 0 => s.error = true,
            Stmt::For(for_) => {
                s.visit_expr(&for_.target);
                s.visit_expr(&for_.iter);
                s.loops += 1;
                s.visit_body(&for_.body);
                s.loops -= 1;
                s.visit_body(&for_.orelse);
            }
            Stmt::While(while_) => {
                s.visit_expr(&while_.test);
                s.loops += 1;
                s.visit_body(&while_.body);
                s.loops -= 1;
                s.visit_body(&while_.orelse);
            }
            _ => walk_stmt(s, stmt),
        });
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        self.deeper(|s| match expr {
            Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_) if !s.in_function => s.error = true,
            Expr::Lambda(lambda) => {
                if let Some(parameters) = &lambda.parameters {
                    s.visit_parameters(parameters);
                }
                s.scope(true, |s| s.visit_expr(&lambda.body));
            }
            _ => walk_expr(s, expr),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::compiles;

    #[test]
    fn what_the_compiler_refuses_after_parsing_does_not_compile() {
        assert!(compiles("class A:\n    def f(self):\n        return 1\n"));
        assert!(!compiles("class A:\n    def f(self):\n        x = 1\n    return x\n"));
        assert!(!compiles("def f(x)\n    return x\n"));
        assert!(!compiles("def f(v):\n    if v:\n        x = 1\n      return x\n"));
        assert!(!compiles("return 1\n"));
        assert!(!compiles("x = (yield)\n"));
        assert!(compiles("f = lambda: (yield)\n"));
        assert!(!compiles("for x in y:\n    pass\nbreak\n"));
        assert!(compiles("for x in y:\n    if x:\n        break\nelse:\n    pass\n"));
        // A loop does not reach into a function defined in it.
        assert!(!compiles("for x in y:\n    def f():\n        continue\n"));
        // A default argument runs in the enclosing scope: at class level here.
        assert!(compiles(
            "class A:\n    def f(self, x=lambda: (yield)):\n        return x\n"
        ));
    }

    #[test]
    fn a_deeply_nested_file_does_not_overflow_the_stack() {
        for source in [
            format!("x = {}1\n", "-".repeat(200_000)),
            format!("x = 1{}\n", "+1".repeat(200_000)),
            format!("x = {}1{}\n", "[".repeat(100_000), "]".repeat(100_000)),
        ] {
            // Run on a small stack, as a worker thread of the operator has.
            let result = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || compiles(&source))
                .expect("a thread")
                .join();
            assert!(result.is_ok());
        }
    }
}
