//! The words for a refused Kotlin rename ([`cc_analysis::kotlin_rename`]: JDT LS reads
//! Kotlin by name only, and the Kotlin compiler's rename refused too).

use cc_analysis::kotlin_rename::Refusal;

use crate::root::WorkspaceRoot;

/// Why the Kotlin compiler's rename was refused, and what to do, for the agent.
pub(super) fn wording(refusal: Refusal, root: &WorkspaceRoot) -> String {
    match refusal {
        Refusal::NotADeclaration { line, symbol } => format!(
            "line {line} does not declare `{symbol}`: give the line of its declaration \
             (`lsp` `definition` finds it)"
        ),
        Refusal::DeclaredMoreThanOnce {
            symbol,
            count,
            places,
        } => {
            let places: Vec<String> = places
                .iter()
                .map(|(path, n)| format!("{} ({n})", root.relative(path)))
                .collect();
            format!(
                "`{symbol}` is declared {count} times in the project ({}): overloads, \
                 overrides or members of other classes, whose uses cannot be told apart by \
                 name, and renaming one would let its callers bind to another",
                places.join(", ")
            )
        }
        Refusal::NoCompiler(why) => why,
    }
}
