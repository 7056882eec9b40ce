//! Compact byte encodings of what a kernel-size build would otherwise hold as millions of
//! small allocations: the whole-tree table's local bindings (decoded when a resolution reads
//! a file's), in the order and with the values they were given.

use bytes::{Buf, BufMut};

use crate::model::{CallbackParam, Local, Pos};
use crate::table::DefId;

const NONE_U32: u32 = u32::MAX;
const NONE_ID: i64 = i64::MIN;

fn put_str(out: &mut Vec<u8>, text: &str) {
    out.put_u32_le(u32::try_from(text.len()).unwrap_or(NONE_U32 - 1));
    out.put_slice(text.as_bytes());
}

fn put_opt_str(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => put_str(out, text),
        None => out.put_u32_le(NONE_U32),
    }
}

fn get_u32(input: &mut &[u8]) -> Option<u32> {
    input.try_get_u32_le().ok()
}

fn get_opt_str(input: &mut &[u8]) -> Option<Option<String>> {
    let len = get_u32(input)?;
    if len == NONE_U32 {
        return Some(None);
    }
    let len = usize::try_from(len).ok()?;
    if input.len() < len {
        return None;
    }
    let text = String::from_utf8_lossy(&input[..len]).into_owned();
    input.advance(len);
    Some(Some(text))
}

/// A file's local bindings, each with the definition it is local to.
pub(crate) fn encode_locals(locals: &[(Local, Option<DefId>)]) -> Box<[u8]> {
    let mut out = Vec::with_capacity(locals.len() * 32);
    for (local, scope) in locals {
        put_str(&mut out, &local.name);
        put_opt_str(&mut out, local.type_text.as_deref());
        put_opt_str(&mut out, local.value.as_deref());
        put_opt_str(&mut out, local.read.as_deref());
        out.put_u32_le(local.pos.line);
        out.put_u32_le(local.pos.column);
        out.put_u32_le(local.param.unwrap_or(NONE_U32));
        out.put_i64_le(scope.map_or(NONE_ID, |scope| scope.0));
        match &local.callback {
            Some(cb) => {
                out.put_u8(1);
                out.put_u32_le(cb.call.line);
                out.put_u32_le(cb.call.column);
                out.put_u32_le(cb.argument);
                out.put_u32_le(cb.param);
            }
            None => out.put_u8(0),
        }
    }
    out.into_boxed_slice()
}

/// What [`encode_locals`] encoded (the bytes are this module's own: a truncated input ends
/// the list where it breaks).
pub(crate) fn decode_locals(mut input: &[u8]) -> Vec<(Local, Option<DefId>)> {
    let mut out = Vec::new();
    while !input.is_empty() {
        match decode_local(&mut input) {
            Some(local) => out.push(local),
            None => break,
        }
    }
    out
}

fn decode_local(input: &mut &[u8]) -> Option<(Local, Option<DefId>)> {
    let name = get_opt_str(input)??;
    let type_text = get_opt_str(input)?;
    let value = get_opt_str(input)?;
    let read = get_opt_str(input)?;
    let pos = Pos {
        line: get_u32(input)?,
        column: get_u32(input)?,
    };
    let param = Some(get_u32(input)?).filter(|p| *p != NONE_U32);
    let scope = Some(input.try_get_i64_le().ok()?)
        .filter(|s| *s != NONE_ID)
        .map(DefId);
    let callback = match input.try_get_u8().ok()? {
        0 => None,
        _ => Some(CallbackParam {
            call: Pos {
                line: get_u32(input)?,
                column: get_u32(input)?,
            },
            argument: get_u32(input)?,
            param: get_u32(input)?,
        }),
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

    fn local() -> impl Strategy<Value = (Local, Option<DefId>)> {
        (
            ".{0,12}",
            proptest::option::of(".{0,12}"),
            proptest::option::of(".{0,12}"),
            proptest::option::of(".{0,12}"),
            (any::<u32>(), any::<u32>()),
            proptest::option::of(0..u32::MAX),
            proptest::option::of(1..i64::MAX),
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
            prop_assert_eq!(decode_locals(&encode_locals(&locals)), locals);
        }
    }
}
