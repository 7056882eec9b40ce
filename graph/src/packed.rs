//! Compact byte encodings of what a kernel-size build would otherwise hold as millions of
//! small allocations or rows: a file's local bindings, in the order and with the values they
//! were given (the same bytes are the index's `locals` row for the file and the whole-tree
//! table's copy of it, decoded when a resolution reads a file's, so loading the table copies
//! them as they are), and sorted id lists (the keys a file's resolution read, `file_keys`).
//!
//! Each binding is a byte of flags (which optional parts follow), its name, then the parts:
//! numbers as LEB128 varints, lines as the difference from the previous binding's line
//! (zigzag), strings as a varint length and their bytes the first time, and as the index of
//! that first time when repeated (a file's bindings repeat their types and names).

use std::collections::HashMap;

use bytes::{Buf, BufMut};

use crate::model::{CallbackParam, Local, Pos};
use crate::table::DefId;

const HAS_TYPE: u8 = 1;
const HAS_VALUE: u8 = 1 << 1;
const HAS_READ: u8 = 1 << 2;
const HAS_PARAM: u8 = 1 << 3;
const HAS_SCOPE: u8 = 1 << 4;
const HAS_CALLBACK: u8 = 1 << 5;

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    out.put_u8(value as u8);
}

fn get_varint(input: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = input.try_get_u8().ok()?;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

fn get_u32(input: &mut &[u8]) -> Option<u32> {
    u32::try_from(get_varint(input)?).ok()
}

/// The strings an encoding has written, by their index (a string is written once).
#[derive(Default)]
struct Written<'a>(HashMap<&'a str, u64>);

impl<'a> Written<'a> {
    /// A varint whose low bit says which: the length of new bytes that follow, or the index
    /// of a string written before.
    fn put(&mut self, out: &mut Vec<u8>, text: &'a str) {
        if let Some(index) = self.0.get(text) {
            put_varint(out, index << 1 | 1);
            return;
        }
        let index = self.0.len() as u64;
        self.0.insert(text, index);
        put_varint(out, (text.len() as u64) << 1);
        out.put_slice(text.as_bytes());
    }
}

/// The strings a decoding has read, by their index.
#[derive(Default)]
struct Read(Vec<String>);

impl Read {
    fn get(&mut self, input: &mut &[u8]) -> Option<String> {
        let tag = get_varint(input)?;
        if tag & 1 == 1 {
            return self.0.get(usize::try_from(tag >> 1).ok()?).cloned();
        }
        let len = usize::try_from(tag >> 1).ok()?;
        if input.len() < len {
            return None;
        }
        let text = String::from_utf8_lossy(&input[..len]).into_owned();
        input.advance(len);
        self.0.push(text.clone());
        Some(text)
    }
}

/// Ids sorted and without repeats, as the differences from the one before.
pub(crate) fn encode_ids(sorted: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(sorted.len() * 2);
    let mut last = 0i64;
    for id in sorted {
        put_varint(&mut out, zigzag(id.wrapping_sub(last)));
        last = *id;
    }
    out
}

/// What [`encode_ids`] encoded (a truncated input ends the list where it breaks).
pub(crate) fn decode_ids(mut input: &[u8]) -> Vec<i64> {
    let mut out = Vec::new();
    let mut last = 0i64;
    while let Some(delta) = get_varint(&mut input) {
        last = last.wrapping_add(unzigzag(delta));
        out.push(last);
    }
    out
}

/// A file's local bindings, each with the definition it is local to.
pub(crate) fn encode_locals<'a>(
    locals: impl IntoIterator<Item = (&'a Local, Option<DefId>)>,
) -> Box<[u8]> {
    let mut out = Vec::new();
    let mut line = 0i64;
    let mut written = Written::default();
    for (local, scope) in locals {
        let flags = [
            (local.type_text.is_some(), HAS_TYPE),
            (local.value.is_some(), HAS_VALUE),
            (local.read.is_some(), HAS_READ),
            (local.param.is_some(), HAS_PARAM),
            (scope.is_some(), HAS_SCOPE),
            (local.callback.is_some(), HAS_CALLBACK),
        ]
        .iter()
        .filter(|(set, _)| *set)
        .fold(0, |all, (_, flag)| all | flag);
        out.put_u8(flags);
        written.put(&mut out, &local.name);
        for text in [&local.type_text, &local.value, &local.read]
            .into_iter()
            .flatten()
        {
            written.put(&mut out, text);
        }
        put_varint(&mut out, zigzag(i64::from(local.pos.line) - line));
        line = i64::from(local.pos.line);
        put_varint(&mut out, u64::from(local.pos.column));
        if let Some(param) = local.param {
            put_varint(&mut out, u64::from(param));
        }
        if let Some(scope) = scope {
            put_varint(&mut out, zigzag(scope.0));
        }
        if let Some(cb) = &local.callback {
            for n in [cb.call.line, cb.call.column, cb.argument, cb.param] {
                put_varint(&mut out, u64::from(n));
            }
        }
    }
    out.into_boxed_slice()
}

/// What [`encode_locals`] encoded (a truncated or foreign input ends the list where it
/// breaks).
pub(crate) fn decode_locals(mut input: &[u8]) -> Vec<(Local, Option<DefId>)> {
    let mut out = Vec::new();
    let mut line = 0i64;
    let mut read = Read::default();
    while !input.is_empty() {
        match decode_local(&mut input, &mut line, &mut read) {
            Some(local) => out.push(local),
            None => break,
        }
    }
    out
}

fn decode_local(
    input: &mut &[u8],
    line: &mut i64,
    read_before: &mut Read,
) -> Option<(Local, Option<DefId>)> {
    let flags = input.try_get_u8().ok()?;
    let has = |flag: u8| flags & flag != 0;
    let name = read_before.get(input)?;
    let mut text = |flag: u8| -> Option<Option<String>> {
        if has(flag) {
            read_before.get(input).map(Some)
        } else {
            Some(None)
        }
    };
    let type_text = text(HAS_TYPE)?;
    let value = text(HAS_VALUE)?;
    let read = text(HAS_READ)?;
    *line = line.checked_add(unzigzag(get_varint(input)?))?;
    let pos = Pos {
        line: u32::try_from(*line).ok()?,
        column: get_u32(input)?,
    };
    let param = if has(HAS_PARAM) {
        Some(get_u32(input)?)
    } else {
        None
    };
    let scope = if has(HAS_SCOPE) {
        Some(DefId(unzigzag(get_varint(input)?)))
    } else {
        None
    };
    let callback = if has(HAS_CALLBACK) {
        Some(CallbackParam {
            call: Pos {
                line: get_u32(input)?,
                column: get_u32(input)?,
            },
            argument: get_u32(input)?,
            param: get_u32(input)?,
        })
    } else {
        None
    };
    Some((
        Local {
            name,
            scope: None,
            type_text,
            value,
            read,
            pos,
            param,
            callback,
        },
        scope,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Often repeated (a repeat is written as an index), sometimes anything.
    const TEXT: &str = "[ab]{0,2}|.{0,12}";

    fn local() -> impl Strategy<Value = (Local, Option<DefId>)> {
        (
            TEXT,
            proptest::option::of(TEXT),
            proptest::option::of(TEXT),
            proptest::option::of(TEXT),
            (any::<u32>(), any::<u32>()),
            proptest::option::of(any::<u32>()),
            proptest::option::of(any::<i64>()),
            proptest::option::of((any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>())),
        )
            .prop_map(
                |(name, type_text, value, read, (line, column), param, scope, cb)| {
                    (
                        Local {
                            name,
                            scope: None,
                            type_text,
                            value,
                            read,
                            pos: Pos { line, column },
                            param,
                            callback: cb.map(|(line, column, argument, param)| CallbackParam {
                                call: Pos { line, column },
                                argument,
                                param,
                            }),
                        },
                        scope.map(DefId),
                    )
                },
            )
    }

    proptest! {
        #[test]
        fn locals_decode_to_what_was_encoded(locals in proptest::collection::vec(local(), 0..8)) {
            prop_assert_eq!(decode_locals(&encode_locals(locals.iter().map(|(l, s)| (l, *s)))), locals);
        }

        #[test]
        fn ids_decode_to_what_was_encoded(mut ids in proptest::collection::vec(any::<i64>(), 0..16)) {
            ids.sort_unstable();
            ids.dedup();
            prop_assert_eq!(decode_ids(&encode_ids(&ids)), ids);
        }

        #[test]
        fn any_bytes_decode_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_locals(&bytes);
            let _ = decode_ids(&bytes);
        }
    }
}
