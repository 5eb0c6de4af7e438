//! The stable hash primitives every structural hash is built from, as
//! TVM-FFI defines them: the same value hashes the same across processes
//! and platforms.

use crate::types::type_registry;

/// TVM-FFI's `StableHashCombine`: stable across processes and platforms.
pub fn hash_combine(key: u64, value: u64) -> u64 {
    key ^ value
        .wrapping_add(0x9e37_79b9)
        .wrapping_add(key << 6)
        .wrapping_add(key >> 2)
}

/// TVM-FFI's `StableHashBytes` (little-endian words, modulo 2^31 - 1).
pub fn hash_bytes(data: &[u8]) -> u64 {
    const MULTIPLIER: u64 = 1_099_511_628_211;
    const MODULUS: u64 = 2_147_483_647;
    // x mod (2^31 - 1) without a division: 2^31 is 1 modulo the modulus,
    // so the high bits fold onto the low ones (twice brings any u64 below
    // 2^31 + 8), then one conditional subtraction.
    #[inline]
    fn reduce(x: u64) -> u64 {
        let x = (x & MODULUS) + (x >> 31);
        let x = (x & MODULUS) + (x >> 31);
        if x >= MODULUS {
            x - MODULUS
        } else {
            x
        }
    }
    let mut result: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
        result = reduce(result.wrapping_mul(MULTIPLIER).wrapping_add(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // The last word assembled in a register: copying the bytes into a
        // buffer and loading it as one word stalled on every short string
        // (the load waits for the byte stores to retire).
        let word = rest.iter().enumerate().fold(0u64, |w, (i, &b)| w | (b as u64) << (8 * i));
        result = reduce(result.wrapping_mul(MULTIPLIER).wrapping_add(word));
    }
    result
}

/// The hash TVM-FFI stores as a type's `type_key_hash` when built with
/// libstdc++ (`std::hash<std::string_view>`, 64-bit Murmur2 with libstdc++'s
/// seed). Structural hashes of containers and objects start from it, so
/// using the same function makes tether's hashes equal upstream's.
pub fn type_key_hash(key: &[u8]) -> u64 {
    const MUL: u64 = (0xc6a4_a793u64 << 32) + 0x5bd1_e995;
    const SEED: u64 = 0xc70f_6907;
    fn shift_mix(v: u64) -> u64 {
        v ^ (v >> 47)
    }
    let mut hash = SEED ^ (key.len() as u64).wrapping_mul(MUL);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let data =
            shift_mix(u64::from_le_bytes(c.try_into().expect("8-byte chunk")).wrapping_mul(MUL))
                .wrapping_mul(MUL);
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut data = 0u64;
        for &b in rest.iter().rev() {
            data = (data << 8) + b as u64;
        }
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    hash = shift_mix(hash).wrapping_mul(MUL);
    shift_mix(hash)
}

/// The type key hash of a registered type index.
pub(crate) fn type_index_key_hash(index: i32) -> u64 {
    type_key_hash(type_registry::type_key_of(index).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::hash_bytes;

    /// The reference: TVM-FFI's loop, with a division per word.
    fn hash_bytes_by_division(data: &[u8]) -> u64 {
        let mut result: u64 = 0;
        for c in data.chunks(8) {
            let mut word = [0u8; 8];
            word[..c.len()].copy_from_slice(c);
            result = result.wrapping_mul(1_099_511_628_211).wrapping_add(u64::from_le_bytes(word)) % 2_147_483_647;
        }
        result
    }

    #[test]
    fn byte_hash_reduction_matches_the_division() {
        let mut state: u64 = 0x1234_5678_9abc_def0;
        let mut data = Vec::new();
        for len in 0..600 {
            // xorshift bytes, plus runs of 0xff and 0x00 that drive the sum
            // near the wrap-around and near multiples of the modulus.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let byte = match len % 3 {
                0 => 0xff,
                1 => state as u8,
                _ => 0,
            };
            data.push(byte);
            assert_eq!(hash_bytes(&data), hash_bytes_by_division(&data), "length {}", data.len());
            let ones = vec![0xffu8; len];
            assert_eq!(hash_bytes(&ones), hash_bytes_by_division(&ones));
        }
    }
}
