//! Object literals passed where an interface is expected (TypeScript's contextual typing):
//! `source.subscribe({ next: (v) => … })` hands an `Observer` to `subscribe`, so a call of
//! `Observer.next` may run that `next` — tsserver's find-references counts it so. The
//! indexer relates the literal's members to nothing, but it names the callee, and the
//! callee's parameter symbols carry their declared types (`(parameter) observerOrNext:
//! Partial<Observer<T>> | ((value: T) => void)`). For each object literal argument this takes
//! the workspace interface or class its parameter's type names (unique by name) and links
//! each function member of the literal to that type's member of the same name (or a base's).

use std::collections::HashMap;

use tree_sitter::Node;

/// A 1-based line and byte column, as the index keeps positions.
pub(super) type Place = (u32, u32);

/// An object literal passed as an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Literal {
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
fn callee_name(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "identifier" => Some(node),
        "member_expression" => node.child_by_field_name("property"),
        _ => None,
    }
}

/// The object literals `literals` finds in the file at `rel` (`None`: not TypeScript or
/// JavaScript, or it does not parse).
pub(super) fn of_file(
    parser: &mut cc_languages::Parser,
    rel: &str,
    bytes: &[u8],
) -> Option<Vec<Literal>> {
    let language = cc_languages::for_path(std::path::Path::new(rel))
        .filter(|l| super::Indexer::TypeScript.languages().contains(&l.name))?;
    let tree = parser.parse(language, bytes).ok()?;
    Some(literals(&tree, bytes))
}

/// Every object literal passed as an argument of a call or `new` in `tree`, with its
/// function members. The walk keeps its own stack (no recursion the input's depth decides).
pub(super) fn literals(tree: &tree_sitter::Tree, source: &[u8]) -> Vec<Literal> {
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

/// The type names a parameter's documentation (`(parameter) name: TYPE`) mentions, outside
/// function types' own parameters and results, type parameters (one capital) left out.
pub(super) fn parameter_types(documentation: &str) -> Vec<String> {
    let Some(line) = documentation
        .lines()
        .find(|l| l.trim_start().starts_with("(parameter)"))
    else {
        return Vec::new();
    };
    let Some((_, ty)) = line.split_once(": ") else {
        return Vec::new();
    };
    // A function type's parameters and result are not what the literal is: drop what
    // stands inside parentheses.
    let mut depth = 0usize;
    let mut outer = String::new();
    for c in ty.chars() {
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

/// The symbol whose parameters a call's callee symbol has: a class's constructor for `new`.
pub(super) fn callable_symbol(symbol: &str) -> Option<String> {
    if symbol.ends_with("().") {
        Some(symbol.to_owned())
    } else if symbol.ends_with('#') {
        Some(format!("{symbol}`<constructor>`()."))
    } else {
        None
    }
}

/// Where an occurrence is: document, line, offset (for ordering).
type Where = (usize, i32, i32);

/// The parameters of each callable symbol, in order: from the definition occurrences of
/// `CALLABLE(name)` symbols, by document and position.
pub(super) fn parameters(index: &scip::types::Index) -> HashMap<&str, Vec<&str>> {
    let mut found: HashMap<&str, Vec<(Where, &str)>> = HashMap::new();
    for (d, document) in index.documents.iter().enumerate() {
        for occurrence in &document.occurrences {
            let symbol = occurrence.symbol.as_str();
            if occurrence.symbol_roles & scip::types::SymbolRole::Definition as i32 == 0
                || !symbol.ends_with(')')
                || occurrence.range.len() < 3
            {
                continue;
            }
            let Some(open) = symbol.rfind("().(") else {
                continue;
            };
            let callable = &symbol[..open + 3];
            found
                .entry(callable)
                .or_default()
                .push(((d, occurrence.range[0], occurrence.range[1]), symbol));
        }
    }
    found
        .into_iter()
        .map(|(callable, mut params)| {
            params.sort();
            params.dedup_by(|a, b| a.1 == b.1);
            (callable, params.into_iter().map(|(_, s)| s).collect())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_types_name_the_interface_not_the_function_types() {
        let doc = "```ts\n(parameter) observerOrNext: Partial<Observer<T>> | ((value: T) => void) | null | undefined\n```";
        assert_eq!(parameter_types(doc), ["Observer"]);
        assert!(parameter_types("```ts\nclass X\n```").is_empty());
        assert_eq!(
            parameter_types("(parameter) o: TapObserver<T> | SubscriptionLike"),
            ["TapObserver", "SubscriptionLike"]
        );
    }

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
