//! Positions an agent can name without guessing: a 1-based line and a symbol on it, turned
//! into the server's `character` in the negotiated encoding.

use crate::server::PositionEncoding;

/// Where a symbol was found on its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 0-based line.
    pub line: u32,
    /// The start of the symbol in the server's encoding (what goes into `Position`).
    pub character: u32,
    /// 1-based column in characters, for people.
    pub column: usize,
    /// How many times the symbol occurs on the line.
    pub occurrences: usize,
    /// The line's text.
    pub text: String,
}

/// Why a position could not be named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// The file has fewer lines.
    #[error("line {line} does not exist: the file has {lines} lines")]
    NoSuchLine {
        /// Asked for.
        line: usize,
        /// How many there are.
        lines: usize,
    },
    /// The symbol is not on that line.
    #[error("`{symbol}` does not occur on line {line}, which reads: `{text}`")]
    NotOnLine {
        /// Asked for.
        symbol: String,
        /// The line (1-based).
        line: usize,
        /// What the line holds.
        text: String,
    },
    /// An empty symbol.
    #[error("`symbol` is empty; give the identifier as it appears on the line")]
    EmptySymbol,
}

/// A character of an identifier (`$` too: PHP variables, JavaScript names).
pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The units of `prefix` in `encoding`.
pub fn units(prefix: &str, encoding: PositionEncoding) -> u32 {
    let count = match encoding {
        PositionEncoding::Utf8 => prefix.len(),
        PositionEncoding::Utf16 => prefix.encode_utf16().count(),
        PositionEncoding::Utf32 => prefix.chars().count(),
    };
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The byte offset in `line` of `character` given in `encoding` (clamped to the line).
pub fn byte_offset(line: &str, character: u32, encoding: PositionEncoding) -> usize {
    let mut seen = 0u32;
    for (offset, c) in line.char_indices() {
        if seen >= character {
            return offset;
        }
        seen += match encoding {
            PositionEncoding::Utf8 => c.len_utf8() as u32,
            PositionEncoding::Utf16 => c.len_utf16() as u32,
            PositionEncoding::Utf32 => 1,
        };
    }
    line.len()
}

/// Finds `symbol` on 1-based `line` of `text`: the first whole-identifier occurrence, else
/// the first occurrence.
pub fn locate(
    text: &str,
    line: usize,
    symbol: &str,
    encoding: PositionEncoding,
) -> Result<Located, PositionError> {
    if symbol.is_empty() {
        return Err(PositionError::EmptySymbol);
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let count = if text.ends_with('\n') {
        lines.len() - 1
    } else {
        lines.len()
    };
    let Some(content) = line
        .checked_sub(1)
        .and_then(|i| lines.get(i))
        .filter(|_| line <= count)
    else {
        return Err(PositionError::NoSuchLine { line, lines: count });
    };
    let content = content.strip_suffix('\r').unwrap_or(content);
    let starts: Vec<usize> = content.match_indices(symbol).map(|(i, _)| i).collect();
    let whole = starts.iter().copied().find(|&start| {
        let before = content[..start].chars().next_back();
        let after = content[start + symbol.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    });
    let Some(start) = whole.or_else(|| starts.first().copied()) else {
        return Err(PositionError::NotOnLine {
            symbol: symbol.to_owned(),
            line,
            text: content.to_owned(),
        });
    };
    Ok(Located {
        line: u32::try_from(line - 1).unwrap_or(u32::MAX),
        character: units(&content[..start], encoding),
        column: content[..start].chars().count() + 1,
        occurrences: starts.len(),
        text: content.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn multibyte_and_astral_prefixes_count_per_encoding() {
        // `é` is 2 bytes / 1 UTF-16 unit; `𝒳` is 4 bytes / 2 UTF-16 units.
        let text = "x = 1\nlet é𝒳 = value(é𝒳)\n";
        let utf16 = locate(text, 2, "value", PositionEncoding::Utf16).unwrap();
        let utf8 = locate(text, 2, "value", PositionEncoding::Utf8).unwrap();
        let utf32 = locate(text, 2, "value", PositionEncoding::Utf32).unwrap();
        assert_eq!(
            (utf16.character, utf8.character, utf32.character),
            (10, 13, 9)
        );
        assert_eq!(utf16.column, 10);
        assert_eq!(byte_offset(&utf16.text, 10, PositionEncoding::Utf16), 13);
    }

    #[test]
    fn prefers_a_whole_identifier_and_quotes_the_line_when_absent() {
        let text = "total = sub_total + total\n";
        let found = locate(text, 1, "total", PositionEncoding::Utf16).unwrap();
        assert_eq!((found.character, found.occurrences), (0, 3));
        let found = locate("subtotal + total\n", 1, "total", PositionEncoding::Utf16).unwrap();
        assert_eq!(found.character, 11);
        let error = locate(text, 1, "nope", PositionEncoding::Utf16).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`nope` does not occur on line 1, which reads: `total = sub_total + total`"
        );
        assert!(matches!(
            locate(text, 3, "x", PositionEncoding::Utf8),
            Err(PositionError::NoSuchLine { lines: 1, .. })
        ));
    }

    proptest! {
        #[test]
        fn offsets_round_trip(prefix in "\\PC{0,12}", encoding in prop::sample::select(vec![PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32])) {
            let line = format!("{prefix}zq");
            let character = units(&prefix, encoding);
            prop_assert_eq!(byte_offset(&line, character, encoding), prefix.len());
        }
    }
}
