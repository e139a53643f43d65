//! The merge operator of the stress runs, whose results the expected state
//! predicts exactly (so verification stays exact across `kill -9`).
//!
//! Two operand kinds:
//! - *affine* `[b'A'][owner u64 BE][mul u32 BE][add u32 BE]`
//!   (`--merge_percent`): a read-modify-write of the key's value base. With
//!   `x = base - 1` (`x = 0` for an absent key), the result is the value
//!   (see `value.rs`) of base `(mul * x + add) mod P + 1`, `P = 2^31 - 1`,
//!   which [`merged_state`] predicts from the committed state. Affine maps
//!   do not commute, so an operand lost, applied twice, applied out of order
//!   or onto the wrong base gives a state the expected state does not
//!   allow (but for a chance of about 1 in 2^31).
//! - *overwrite* `[b'P'][value]` (`--use_merge`, RocksDB db_stress's: puts
//!   become merges of the whole value): the result is `value`, whatever
//!   lies below, so the expected state treats it as a put.
//!
//! `partial_merge` combines operands exactly: from the newest overwrite on,
//! an overwrite of that value with the later operands applied; affine
//! operands alone compose into one affine operand. So flushes and
//! compactions that cannot see a key's base still rewrite its operands.
//!
//! The operator is not one Shale ships: every open of a stress DB passes
//! it (`db_options::random_options`).

use shale::{Error, MergeOperator};

use super::expected::ValueState;
use super::value::{decode, encode, key_index};

/// The modulus of the affine maps: a prime, so every state `1..=P` is
/// reachable and fits a [`ValueState`] (`< 2^31`).
pub const P: u32 = (1 << 31) - 1;

/// The operator's name, persisted with the families' options.
pub const NAME: &str = "shale-stress.affine-or-overwrite";

/// The state after an affine operand `(mul, add)` on a key whose state is
/// `committed` (0: absent). Never 0.
pub fn merged_state(committed: ValueState, mul: u32, add: u32) -> ValueState {
    let x = u64::from(committed.saturating_sub(1));
    let y = (u64::from(mul) * x + u64::from(add)) % u64::from(P);
    y as u32 + 1
}

/// An affine operand for the key with `owner` (see `value::owner`).
/// Requires `mul < P` and `add < P`.
pub fn affine(owner: u64, mul: u32, add: u32) -> Vec<u8> {
    let mut o = Vec::with_capacity(17);
    o.push(b'A');
    o.extend_from_slice(&owner.to_be_bytes());
    o.extend_from_slice(&mul.to_be_bytes());
    o.extend_from_slice(&add.to_be_bytes());
    o
}

/// An overwrite operand: the merge result is `value`.
pub fn overwrite(value: &[u8]) -> Vec<u8> {
    let mut o = Vec::with_capacity(value.len() + 1);
    o.push(b'P');
    o.extend_from_slice(value);
    o
}

/// The (owner, mul, add) of an affine operand's body (after `A`).
fn parse_affine(body: &[u8]) -> Result<(u64, u32, u32), String> {
    let bytes: &[u8; 16] = body
        .try_into()
        .map_err(|_| format!("affine operand of {} bytes (must be 16)", body.len()))?;
    let [o0, o1, o2, o3, o4, o5, o6, o7, m0, m1, m2, m3, a0, a1, a2, a3] = *bytes;
    let owner = u64::from_be_bytes([o0, o1, o2, o3, o4, o5, o6, o7]);
    let (mul, add) = (
        u32::from_be_bytes([m0, m1, m2, m3]),
        u32::from_be_bytes([a0, a1, a2, a3]),
    );
    if mul >= P || add >= P {
        return Err(format!("affine operand ({mul}, {add}) out of range"));
    }
    Ok((owner, mul, add))
}

/// Applies one operand to `existing` (the value so far, `None`: absent).
fn apply(key: &[u8], existing: Option<&[u8]>, operand: &[u8]) -> Result<Vec<u8>, String> {
    match operand.split_first() {
        Some((b'P', value)) => Ok(value.to_vec()),
        Some((b'A', body)) => {
            let (owner, mul, add) = parse_affine(body)?;
            if key_index(key) != Some(owner & u64::from(u32::MAX)) {
                return Err(format!(
                    "affine operand of owner {owner:#x} under key {key:02x?}"
                ));
            }
            let state = decode(owner, existing)?;
            Ok(encode(owner, merged_state(state, mul, add)))
        }
        _ => Err(format!("unknown operand {operand:02x?}")),
    }
}

/// See the module documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct StressMergeOperator;

impl MergeOperator for StressMergeOperator {
    fn name(&self) -> &str {
        NAME
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> shale::Result<Vec<u8>> {
        let mut cur = existing.map(<[u8]>::to_vec);
        for o in operands {
            cur = Some(apply(key, cur.as_deref(), o).map_err(Error::InvalidArgument)?);
        }
        Ok(cur.unwrap_or_default())
    }

    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        if let Some(i) = operands.iter().rposition(|o| o.first() == Some(&b'P')) {
            let (put, later) = (operands.get(i)?, operands.get(i + 1..)?);
            let v = self.full_merge(key, put.get(1..), later).ok()?;
            return Some(overwrite(&v));
        }
        // Affine operands only: x -> m2 (m1 x + a1) + a2, oldest first.
        let mut acc: Option<(u64, u64, u64)> = None;
        for o in operands {
            let (owner, m, a) = parse_affine(o.get(1..)?).ok()?;
            let (m, a) = (u64::from(m), u64::from(a));
            let p = u64::from(P);
            acc = Some(match acc {
                None => (owner, m, a),
                Some((w, m1, a1)) if w == owner => (w, m * m1 % p, (m * a1 + a) % p),
                Some(_) => return None,
            });
        }
        let (owner, m, a) = acc?;
        Some(affine(owner, m as u32, a as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress::value::{key_bytes, owner};

    #[test]
    fn full_and_partial_merges_agree_with_the_prediction() {
        let op = StressMergeOperator;
        let (k, own) = (7u64, owner(2, 7));
        let key = key_bytes(k);
        let ops = [
            affine(own, 3, 5),
            affine(own, 1000, P - 1),
            affine(own, 2, 0),
        ];
        let refs: Vec<&[u8]> = ops.iter().map(|o| &o[..]).collect();
        for start in [0, 1, 12_345, P] {
            let want = [(3, 5), (1000, P - 1), (2, 0)]
                .iter()
                .fold(start, |s, &(m, a)| merged_state(s, m, a));
            let existing = (start != 0).then(|| encode(own, start));
            let got = op.full_merge(&key, existing.as_deref(), &refs).unwrap();
            assert_eq!(decode(own, Some(&got)), Ok(want), "start {start}");
            // Partial merges, in any grouping, then a full merge.
            let ab = op.partial_merge(&key, &refs[..2]).unwrap();
            let abc = op.partial_merge(&key, &[&ab, refs[2]]).unwrap();
            let got2 = op.full_merge(&key, existing.as_deref(), &[&abc]).unwrap();
            assert_eq!(got2, got, "start {start}");
        }
        // Order matters.
        let fwd = op.full_merge(&key, None, &refs).unwrap();
        let rev: Vec<&[u8]> = refs.iter().rev().copied().collect();
        assert_ne!(op.full_merge(&key, None, &rev).unwrap(), fwd);
        // An overwrite hides what lies below; later affine operands apply.
        let put = overwrite(&encode(own, 42));
        let with_put: Vec<&[u8]> = vec![refs[0], &put, refs[1]];
        let got = op.full_merge(&key, None, &with_put).unwrap();
        assert_eq!(decode(own, Some(&got)), Ok(merged_state(42, 1000, P - 1)));
        let partial = op.partial_merge(&key, &with_put).unwrap();
        assert_eq!(
            op.full_merge(&key, Some(b"junk"), &[&partial]).unwrap(),
            got
        );
        // Misplaced or malformed operands fail the read.
        assert!(op.full_merge(&key_bytes(8), None, &refs).is_err());
        assert!(op.full_merge(&key, None, &[b"A12"]).is_err());
        assert!(op.full_merge(&key, Some(b"junk"), &refs).is_err());
        assert_eq!(
            op.partial_merge(&key, &[&ops[0], &affine(own + 1, 1, 1)]),
            None
        );
        // Overwrites of any bytes (history mode's values).
        let h = overwrite(b"s1.c2.3");
        assert_eq!(
            op.full_merge(b"k0001", Some(b"x"), &[&h]).unwrap(),
            b"s1.c2.3"
        );
    }
}
