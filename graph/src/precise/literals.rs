//! Object literals passed where an interface is expected (TypeScript's contextual typing):
//! `source.subscribe({ next: (v) => … })` hands an `Observer` to `subscribe`, so a call of
//! `Observer.next` may run that `next` — tsserver's find-references counts it so. The
//! indexer relates the literal's members to nothing, but it names the callee, and the
//! callee's parameter symbols carry their declared types (`(parameter) observerOrNext:
//! Partial<Observer<T>> | ((value: T) => void)`). For each object literal argument this takes
//! the workspace interface or class its parameter's type names (unique by name) and links
//! each function member of the literal to that type's member of the same name (or a base's).

use std::collections::HashMap;

pub(super) use crate::literals::Literal;

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
    Some(crate::literals::literals(&tree, bytes))
}

/// The type names a parameter's documentation (`(parameter) name: TYPE`) mentions (see
/// [`crate::literals::type_names`]).
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
    crate::literals::type_names(ty)
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
}
