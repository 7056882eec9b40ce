//! Object literals passed as arguments (`source.subscribe({ next: (v) => … })`): TypeScript
//! types such a literal by the parameter it is passed to, so a call of that type's member may
//! run the literal's. Extraction records them for the graph's own resolution (through the
//! callee's declared parameter types); the precise tier reads them for the indexer's.

use tree_sitter::Node;

/// A 1-based line and byte column, as the index keeps positions.
pub type Place = (u32, u32);

/// An object literal passed as an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// Where the callee's name is (`subscribe` of `source.subscribe(…)`, `X` of `new X(…)`).
    pub callee: Place,
    /// Which argument the literal is.
    pub argument: usize,
    /// Its members whose values are functions: name and where the name is.
    pub members: Vec<(String, Place)>,
}

fn place(node: Node<'_>) -> Place {
    let p = node.start_position();
    (
        u32::try_from(p.row + 1).unwrap_or(u32::MAX),
        u32::try_from(p.column + 1).unwrap_or(u32::MAX),
    )
}

/// The name a callee expression is called by: an identifier, or a member's property.
pub fn callee_name(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "identifier" => Some(node),
        "member_expression" => node.child_by_field_name("property"),
        _ => None,
    }
}

/// Every object literal passed as an argument of a call or `new` in `tree`, with its
/// function members. The walk keeps its own stack (no recursion the input's depth decides).
pub fn literals(tree: &tree_sitter::Tree, source: &[u8]) -> Vec<Literal> {
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
        let callee = match node.kind() {
            "call_expression" => node.child_by_field_name("function"),
            "new_expression" => node.child_by_field_name("constructor"),
            _ => continue,
        };
        let (Some(callee), Some(arguments)) = (
            callee.and_then(callee_name),
            node.child_by_field_name("arguments"),
        ) else {
            continue;
        };
        let mut cursor = arguments.walk();
        for (argument, value) in arguments.named_children(&mut cursor).enumerate() {
            if value.kind() != "object" {
                continue;
            }
            let members = function_members(value, source);
            if !members.is_empty() {
                out.push(Literal {
                    callee: place(callee),
                    argument,
                    members,
                });
            }
        }
    }
    out
}

/// The members of an object literal whose values are functions.
fn function_members(object: Node<'_>, source: &[u8]) -> Vec<(String, Place)> {
    let mut members = Vec::new();
    let mut cursor = object.walk();
    for member in object.named_children(&mut cursor) {
        let name = match member.kind() {
            "pair" => {
                let is_function = member
                    .child_by_field_name("value")
                    .is_some_and(|v| matches!(v.kind(), "arrow_function" | "function_expression"));
                member
                    .child_by_field_name("key")
                    .filter(|k| is_function && k.kind() == "property_identifier")
            }
            "method_definition" => member.child_by_field_name("name"),
            _ => None,
        };
        if let Some(name) = name {
            if let Ok(text) = name.utf8_text(source) {
                members.push((text.to_owned(), place(name)));
            }
        }
    }
    members
}

/// Utility and built-in types a parameter's type wraps an interface in, and names that are
/// no workspace type.
const WRAPPERS: &[&str] = &[
    "Partial",
    "Readonly",
    "Required",
    "Pick",
    "Omit",
    "Record",
    "Array",
    "ReadonlyArray",
    "Promise",
    "PromiseLike",
    "Exclude",
    "Extract",
    "NonNullable",
    "Parameters",
    "ReturnType",
];

/// The workspace type names a written type mentions (`Partial<Observer<T>> | ((value: T) =>
/// void)` → `Observer`): outside function types' own parameters and results, utility types
/// left out, type parameters (one capital) left out.
pub fn type_names(written: &str) -> Vec<String> {
    // A function type's parameters and result are not what the literal is: drop what
    // stands inside parentheses.
    let mut depth = 0usize;
    let mut outer = String::new();
    for c in written.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => outer.push(c),
            _ => {}
        }
    }
    let mut names = Vec::new();
    for word in outer.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')) {
        let starts_upper = word.chars().next().is_some_and(char::is_uppercase);
        if starts_upper
            && word.len() > 1
            && !WRAPPERS.contains(&word)
            && !names.contains(&word.to_owned())
        {
            names.push(word.to_owned());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_of_calls_and_news() {
        let source = b"source.subscribe({ next: (v) => v, error(e) { }, value: 1 });\nnew S(1, { complete: function () {} });\n";
        let language = cc_languages::by_name("typescript").unwrap();
        let tree = cc_languages::Parser::new().parse(language, source).unwrap();
        let found = literals(&tree, source);
        assert_eq!(found.len(), 2, "{found:?}");
        let subscribe = found.iter().find(|l| l.callee == (1, 8)).unwrap();
        assert_eq!(subscribe.argument, 0);
        assert_eq!(
            subscribe.members,
            [("next".to_owned(), (1, 20)), ("error".to_owned(), (1, 36))]
        );
        let new = found.iter().find(|l| l.callee == (2, 5)).unwrap();
        assert_eq!((new.argument, new.members.len()), (1, 1));
    }
}
