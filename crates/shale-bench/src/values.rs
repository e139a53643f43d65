//! db_bench's value bytes: `RandomGenerator` over LevelDB's `Random` LCG.
//!
//! A buffer of at least `max(1 MiB, value_size)` bytes is built from 100-byte
//! pieces; each piece is `max(1, int(100 × compression_ratio))` random
//! printable chars (`' ' + Uniform(95)`) repeated to 100 bytes. `generate`
//! hands out consecutive slices, wrapping to 0 when the next one would not
//! fit. db_bench seeds the LCG with 301 always; shale-bench seeds it from
//! the thread's seed unless `--db_bench_compat_values=1` (see seeds.rs).
//! One instance per thread per benchmark; not shared.

/// LevelDB's "minimal standard" generator: `s ← s·16807 mod (2^31 − 1)`.
#[derive(Debug, Clone)]
pub struct LevelDbRandom {
    seed: u32,
}

impl LevelDbRandom {
    const M: u32 = 2_147_483_647;

    /// Seeds like `leveldb::Random(s)` (0 and 2^31−1 map to 1).
    pub fn new(s: u32) -> LevelDbRandom {
        let mut seed = s & 0x7fff_ffff;
        if seed == 0 || seed == Self::M {
            seed = 1;
        }
        LevelDbRandom { seed }
    }

    /// The next value in `[1, 2^31 − 2]`.
    pub fn next_u32(&mut self) -> u32 {
        let product = u64::from(self.seed) * 16807;
        let mut s = ((product >> 31) + (product & u64::from(Self::M))) as u32;
        if s > Self::M {
            s -= Self::M;
        }
        self.seed = s;
        s
    }

    /// `next() % n`.
    pub fn uniform(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
}

/// The seed db_bench hard-wires for its value generator.
pub const DB_BENCH_VALUE_SEED: u32 = 301;

/// One 100-byte (or `len`-byte) compressible piece, as `test::CompressibleString`.
fn compressible_piece(rnd: &mut LevelDbRandom, ratio: f64, len: usize, out: &mut Vec<u8>) {
    let raw = ((len as f64 * ratio) as usize).max(1);
    let random: Vec<u8> = (0..raw).map(|_| b' ' + rnd.uniform(95) as u8).collect();
    out.clear();
    while out.len() < len {
        out.extend_from_slice(&random);
    }
    out.truncate(len);
}

/// db_bench's `RandomGenerator`.
#[derive(Debug, Clone)]
pub struct RandomGenerator {
    data: Vec<u8>,
    pos: usize,
}

impl RandomGenerator {
    /// Builds the buffer for values of up to `max_value_size` bytes.
    pub fn new(seed: u32, compression_ratio: f64, max_value_size: usize) -> RandomGenerator {
        let mut rnd = LevelDbRandom::new(seed);
        let target = max_value_size.max(1 << 20);
        let mut data = Vec::with_capacity(target + 100);
        let mut piece = Vec::with_capacity(100);
        while data.len() < target {
            compressible_piece(&mut rnd, compression_ratio, 100, &mut piece);
            data.extend_from_slice(&piece);
        }
        RandomGenerator { data, pos: 0 }
    }

    /// The next `len` bytes (`len` ≤ buffer size, guaranteed by `new`).
    #[inline]
    pub fn generate(&mut self, len: usize) -> &[u8] {
        debug_assert!(len <= self.data.len());
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }

    /// Buffer size in bytes.
    pub fn buffer_len(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcg_reference() {
        // Park–Miller with seed 1: 16807, 282475249, 1622650073 (classic values).
        let mut r = LevelDbRandom::new(1);
        assert_eq!(r.next_u32(), 16807);
        assert_eq!(r.next_u32(), 282_475_249);
        assert_eq!(r.next_u32(), 1_622_650_073);
        assert_eq!(LevelDbRandom::new(0).next_u32(), 16807);
    }

    #[test]
    fn half_compressible_value_is_50_chars_twice() {
        let mut g = RandomGenerator::new(DB_BENCH_VALUE_SEED, 0.5, 100);
        assert_eq!(g.buffer_len(), 1_048_600); // 10,486 pieces (§3.1)
        let v = g.generate(100).to_vec();
        assert_eq!(v[..50], v[50..]);
        assert!(v.iter().all(|&b| (0x20..=0x7e).contains(&b)));
        // The 50 chars are not themselves a repetition of something shorter.
        let distinct: std::collections::BTreeSet<u8> = v[..50].iter().copied().collect();
        assert!(distinct.len() > 20);
        // Next value is the next piece, different from the first.
        assert_ne!(g.generate(100), &v[..]);
    }

    #[test]
    fn ratio_one_and_tiny_ratio() {
        let mut g = RandomGenerator::new(7, 1.0, 100);
        let v = g.generate(100).to_vec();
        assert_ne!(v[..50], v[50..]);
        let mut g = RandomGenerator::new(7, 0.001, 100);
        let v = g.generate(100);
        assert!(v.iter().all(|&b| b == v[0])); // raw = max(1, 0) = 1 char
    }

    #[test]
    fn wraps_when_value_would_not_fit() {
        let mut g = RandomGenerator::new(301, 0.5, 100);
        let first = g.generate(300).to_vec();
        let n = g.buffer_len() / 300;
        for _ in 1..n {
            g.generate(300);
        }
        assert_eq!(g.generate(300), &first[..]);
    }

    #[test]
    fn seed_changes_bytes() {
        let mut a = RandomGenerator::new(301, 0.5, 100);
        let mut b = RandomGenerator::new(302, 0.5, 100);
        assert_ne!(a.generate(100), b.generate(100));
    }
}
