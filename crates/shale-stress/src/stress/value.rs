//! Keys and values of the stress run.
//!
//! A key is its index as 8 big-endian bytes, so byte order = numeric order.
//! A value encodes (owner, value base) and a filler derived from both, where
//! the owner is the key and its column family (`cf << 32 | key`, see
//! [`owner`]), so a value read under the wrong key or in the wrong family, a
//! stale value and a corrupted value are all detected:
//! `[owner u64 BE][base u32 BE][filler]`. The filler is 0-40 bytes, or for
//! 1 value in 16 (by the same hash) 41 bytes to 4 KiB, so values span the
//! drawn `min_blob_size`s (`db_options::random_blob`): some go to blob
//! files, some stay in the tables.
//!
//! The *filtered form* (what the stress compaction filter rewrites a value
//! to, `compaction_filter.rs`) has the top bit of the base field set, the
//! same base and filler: a base is below 2^31, so the forms never collide.

use super::expected::ValueState;

/// The owner id of `key` in family `cf` (the key itself in `default`).
/// Requires `key < 2^32`.
pub fn owner(cf: u32, key: u64) -> u64 {
    (u64::from(cf) << 32) | key
}

/// The bytes of key `k`.
pub fn key_bytes(k: u64) -> [u8; 8] {
    k.to_be_bytes()
}

/// The key index of `bytes`, if it is a well-formed key.
pub fn key_index(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

fn filler(key: u64, base: ValueState) -> impl Iterator<Item = u8> {
    let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(base).wrapping_mul(0xff51_afd7_ed55_8ccd);
    let len = if (h >> 40).is_multiple_of(16) {
        41 + (h >> 16) as usize % 4056
    } else {
        (h % 41) as usize
    };
    (0..len).map(move |i| (h >> (i % 8 * 8)) as u8 ^ i as u8)
}

/// The value written for `base` under `key`. Requires `base != 0`.
pub fn encode(key: u64, base: ValueState) -> Vec<u8> {
    let fill = filler(key, base);
    let mut v = Vec::with_capacity(12 + fill.size_hint().0);
    v.extend_from_slice(&key.to_be_bytes());
    v.extend_from_slice(&base.to_be_bytes());
    v.extend(fill);
    v
}

/// The flag of the filtered form, in the base field.
const FILTERED: u32 = 1 << 31;

/// What a read of one key returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    /// 0 for absent, else the value base.
    pub state: ValueState,
    /// The value is in the filtered form.
    pub filtered: bool,
}

/// The filtered form of `value`; `None` if it is already filtered or too
/// short to hold a base.
pub fn filtered(value: &[u8]) -> Option<Vec<u8>> {
    let flag = value.get(8)?;
    if flag & 0x80 != 0 || value.len() < 12 {
        return None;
    }
    let mut v = value.to_vec();
    v[8] |= 0x80;
    Some(v)
}

/// The state a read of `key` returned: 0 for absent, else the value base,
/// in either form. Errors describe a malformed value or a value of another
/// key.
pub fn decode(key: u64, value: Option<&[u8]>) -> Result<ValueState, String> {
    read(key, value).map(|r| r.state)
}

/// [`decode`], telling the forms apart.
pub fn read(key: u64, value: Option<&[u8]>) -> Result<Read, String> {
    let Some(v) = value else {
        return Ok(Read {
            state: 0,
            filtered: false,
        });
    };
    let (k, rest) = v
        .split_at_checked(8)
        .ok_or_else(|| format!("value too short: {v:02x?}"))?;
    let (b, fill) = rest
        .split_at_checked(4)
        .ok_or_else(|| format!("value too short: {v:02x?}"))?;
    let owner = key_index(k).unwrap_or(u64::MAX);
    let raw = u32::from_be_bytes(b.try_into().map_err(|_| "bad base".to_string())?);
    let base = raw & !FILTERED;
    if owner != key {
        return Err(format!(
            "value of key {owner} (base {base}) found under key {key}"
        ));
    }
    if base == 0 || !fill.iter().copied().eq(filler(key, base)) {
        return Err(format!("corrupt value for key {key} base {base}: {v:02x?}"));
    }
    Ok(Read {
        state: base,
        filtered: raw & FILTERED != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_detection() {
        for (k, b) in [(0, 1), (7, 123_456), (u32::MAX as u64, (1 << 31) - 1)] {
            assert_eq!(decode(k, Some(&encode(k, b))), Ok(b));
        }
        assert_eq!(decode(3, None), Ok(0));
        assert!(decode(3, Some(&encode(4, 9))).is_err());
        let mut v = encode(3, 9);
        v.push(0);
        assert!(decode(3, Some(&v)).is_err());
        assert!(decode(3, Some(&[1, 2, 3])).is_err());
        assert_eq!(owner(0, 3), 3);
        assert!(decode(owner(1, 3), Some(&encode(3, 9))).is_err());
        assert_eq!(decode(owner(1, 3), Some(&encode(owner(1, 3), 9))), Ok(9));
        assert_eq!(key_index(&key_bytes(42)), Some(42));
        assert!(key_bytes(1) < key_bytes(256));
        // The filtered form: same state, told apart; filtering it again
        // gives nothing; a corrupted filtered value is caught.
        let f = filtered(&encode(3, 9)).unwrap();
        assert_eq!(decode(3, Some(&f)), Ok(9));
        assert_eq!(
            read(3, Some(&f)),
            Ok(Read {
                state: 9,
                filtered: true
            })
        );
        assert!(!read(3, Some(&encode(3, 9))).unwrap().filtered);
        assert_eq!(filtered(&f), None);
        assert_eq!(filtered(&[1, 2]), None);
        // Sizes: 12-52 bytes mostly, now and then up to 4 KiB.
        let lens: Vec<usize> = (1..2000).map(|b| encode(5, b).len()).collect();
        assert!(lens.iter().all(|&l| (12..=4096).contains(&l)));
        let large = lens.iter().filter(|&&l| l > 52).count();
        assert!((60..200).contains(&large), "{large} large values of 1999");
        let mut bad = f.clone();
        bad[11] ^= 1;
        assert!(decode(3, Some(&bad)).is_err());
    }
}
