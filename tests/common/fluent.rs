//! The variables a Fluent message names, read from its syntax (selectors and variants too).

use fluent_syntax::ast;
use std::collections::BTreeSet;

/// Every variable `p` names.
pub fn variables(p: &ast::Pattern<&str>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    in_pattern(p, &mut out);
    out
}

fn in_pattern(p: &ast::Pattern<&str>, out: &mut BTreeSet<String>) {
    for el in &p.elements {
        if let ast::PatternElement::Placeable { expression } = el {
            in_expr(expression, out);
        }
    }
}

fn in_expr(e: &ast::Expression<&str>, out: &mut BTreeSet<String>) {
    match e {
        ast::Expression::Select { selector, variants } => {
            in_inline(selector, out);
            for v in variants {
                in_pattern(&v.value, out);
            }
        }
        ast::Expression::Inline(i) => in_inline(i, out),
    }
}

fn in_inline(i: &ast::InlineExpression<&str>, out: &mut BTreeSet<String>) {
    match i {
        ast::InlineExpression::VariableReference { id } => {
            out.insert(id.name.to_string());
        }
        ast::InlineExpression::Placeable { expression } => in_expr(expression, out),
        _ => {}
    }
}
