//! `-o jsonpath=TEMPLATE`: kubectl's template syntax over the JSON shape `-o json` prints. Text
//! outside braces is printed as it is; inside braces, a path (`{.items[*].name}`, `{.phase}`,
//! `{$.kind}`, `{@}`, filters such as `{.items[?(@.phase=="Running")].name}`), a string
//! (`{"\n"}`, `{"\t"}`), or `{range PATH}…{end}`, which prints what is between for each value
//! the path finds, its paths read from that value. The paths themselves are RFC 9535 JSONPath
//! (jsonpath-rust, the engine kube's client already carries), which kubectl's follow: `.x` there is `$.x` here, read from the value in
//! hand. Several values are printed separated by spaces; a string as it is, a number or a
//! boolean in JSON, an object or a list as JSON, null as nothing. Nothing is added at the end
//! (as kubectl: give `{"\n"}`).

use jsonpath_rust::parser::model::JpQuery as JsonPath;
use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

/// The longest template taken, in bytes.
const MAX_TEMPLATE: usize = 4096;

/// A parsed template.
#[derive(Debug)]
pub struct Template(Vec<Node>);

#[derive(Debug)]
enum Node {
    Text(String),
    /// A path, and whether it starts at the document (`$`) rather than the value in hand.
    Path(JsonPath, bool),
    Range(JsonPath, bool, Vec<Node>),
}

/// A piece of the template: text, or what a pair of braces holds.
enum Piece<'a> {
    Text(String),
    Braced(&'a str),
}

/// Splits the template into text and braced expressions; a brace inside a quoted string does
/// not end one.
fn pieces(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Piece::Text(rest[..open].to_string()));
        }
        let inner = &rest[open + 1..];
        let mut quote: Option<char> = None;
        let mut escaped = false;
        let close = inner.char_indices().find_map(|(i, c)| {
            match (quote, c) {
                (Some(_), _) if escaped => escaped = false,
                (Some(_), '\\') => escaped = true,
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '}') => return Some(i),
                (None, _) => {}
            }
            None
        });
        let close = close.ok_or("a \"{\" is not closed")?;
        out.push(Piece::Braced(inner[..close].trim()));
        rest = &inner[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest.to_string()));
    }
    Ok(out)
}

/// A string in braces, `"…"`, with `\n`, `\t`, `\r`, `\"` and `\\`.
fn literal(s: &str) -> Option<String> {
    let body = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        out.push(match (c, c == '\\') {
            (_, true) => match chars.next()? {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                other => other,
            },
            (c, false) => c,
        });
    }
    Some(out)
}

/// `text` with every run of whitespace, line breaks included, as one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A kubectl path as RFC 9535 JSONPath, and whether it starts at the document.
fn path(expr: &str) -> Result<(JsonPath, bool), String> {
    let (rfc, from_root) = match expr {
        "" | "." | "@" => ("$".to_string(), false),
        _ if expr.starts_with('$') => (expr.to_string(), true),
        _ if expr.starts_with('@') => (format!("${}", &expr[1..]), false),
        // `.x` becomes `$.x`, `..x` (recursive) `$..x`, `[0]` `$[0]`.
        _ => (format!("${expr}"), false),
    };
    let parsed = parse_json_path(&rfc).map_err(|e| {
        format!(
            "{}: {}",
            ichor_model::error_text::quoted(expr),
            // The parser's message spans lines (a caret under the place): one line here.
            ichor_model::inert::truncate(&one_line(&e.to_string()), 120)
        )
    })?;
    Ok((parsed, from_root))
}

impl Template {
    /// Parses `template`; an error says what is wrong, in a bounded line.
    pub fn parse(template: &str) -> Result<Template, String> {
        if template.len() > MAX_TEMPLATE {
            return Err(format!("the template is over {MAX_TEMPLATE} bytes"));
        }
        let mut stack: Vec<(JsonPath, bool, Vec<Node>)> = Vec::new();
        let mut top: Vec<Node> = Vec::new();
        for piece in pieces(template)? {
            let node = match piece {
                Piece::Text(t) => Node::Text(t),
                Piece::Braced("end") => {
                    let (p, root, body) = stack.pop().ok_or("{end} without {range}")?;
                    let range = Node::Range(p, root, std::mem::replace(&mut top, body));
                    top.push(range);
                    continue;
                }
                Piece::Braced(b) if b.starts_with("range ") || b == "range" => {
                    let (p, root) = path(b.trim_start_matches("range").trim())?;
                    stack.push((p, root, std::mem::take(&mut top)));
                    continue;
                }
                Piece::Braced(b) if b.starts_with('"') => {
                    Node::Text(literal(b).ok_or_else(|| {
                        format!("{}: not a string", ichor_model::error_text::quoted(b))
                    })?)
                }
                Piece::Braced(b) => {
                    let (p, root) = path(b)?;
                    Node::Path(p, root)
                }
            };
            top.push(node);
        }
        if !stack.is_empty() {
            return Err("{range} without {end}".into());
        }
        Ok(Template(top))
    }

    /// The template applied to `doc`.
    pub fn render(&self, doc: &Value) -> String {
        let mut out = String::new();
        render(&self.0, doc, doc, &mut out);
        out
    }
}

/// The values `path` finds in `value`; none where it names no node (a function's result).
fn found_by<'a>(path: &JsonPath, value: &'a Value) -> Vec<&'a Value> {
    js_path_process(path, value)
        .map(|found| found.into_iter().map(|r| r.val()).collect())
        .unwrap_or_default()
}

fn render(nodes: &[Node], doc: &Value, here: &Value, out: &mut String) {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Path(p, root) => {
                let found = found_by(p, if *root { doc } else { here });
                let words: Vec<String> = found.into_iter().map(word).collect();
                out.push_str(&words.join(" "));
            }
            Node::Range(p, root, body) => {
                for v in found_by(p, if *root { doc } else { here }) {
                    // `{range .items[*]}`: each item; `{range .items}`: the list's items too.
                    match v {
                        Value::Array(items) => {
                            items.iter().for_each(|i| render(body, doc, i, out));
                        }
                        one => render(body, doc, one, out),
                    }
                }
            }
        }
    }
}

/// One value as kubectl prints it.
fn word(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::Template;
    use serde_json::json;

    fn run(t: &str, doc: &serde_json::Value) -> String {
        Template::parse(t).unwrap().render(doc)
    }

    #[test]
    fn kubectls_templates() {
        let list = json!({"kind": "OperationList", "items": [
            {"name": "a", "phase": "Running", "progress": {"done": 1, "total": 3}},
            {"name": "b}", "phase": "Completed", "progress": {"done": 3, "total": 3}},
        ]});
        assert_eq!(run("{.items[*].name}", &list), "a b}");
        assert_eq!(
            run(
                "{.items[0].progress.done}/{.items[0].progress.total}",
                &list
            ),
            "1/3"
        );
        assert_eq!(
            run(
                "{range .items[*]}{.name}{\"\\t\"}{.phase}{\"\\n\"}{end}",
                &list
            ),
            "a\tRunning\nb}\tCompleted\n"
        );
        assert_eq!(
            run("{range .items[*]}{$.kind} {end}", &list),
            "OperationList OperationList "
        );
        assert_eq!(run("{.items[?(@.phase==\"Completed\")].name}", &list), "b}");
        assert_eq!(run("{.items[?(@.name==\"}\")].name}", &list), "");
        assert_eq!(run("kind={.kind}", &list), "kind=OperationList");
        assert_eq!(
            run("{.items[0].progress}", &list),
            "{\"done\":1,\"total\":3}"
        );
        assert_eq!(run("{.missing}", &list), "");
        assert_eq!(run("{range .items}{.name},{end}", &list), "a,b},");
        assert_eq!(run("{@.kind}", &list), "OperationList");
    }

    #[test]
    fn broken_templates_are_refused_in_a_line() {
        for bad in [
            "{.items[",
            "{range .items[*]}",
            "{end}",
            "{.a",
            "{\"x}",
            "{.items[?(@.a==)]}",
        ] {
            let e = Template::parse(bad).unwrap_err();
            assert!(!e.contains('\n') && e.len() < 300, "{bad}: {e}");
        }
        assert!(Template::parse(&"{.a}".repeat(2000)).is_err());
    }
}
