//! The 8-lane ladder against RFC 7748's vectors and against aws-lc-rs on random and edge-case
//! inputs, every lane different.

use aws_lc_rs::agreement::{self, PrivateKey, UnparsedPublicKey, X25519};

use super::{x25519_base_x8, x25519_x8, BASE_POINT, LEN};
use crate::ifma::{Kernel, LANES};

fn hex(s: &str) -> [u8; LEN] {
    let mut out = [0u8; LEN];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("test vectors are hex");
    }
    out
}

fn kernel() -> Option<Kernel> {
    let kernel = Kernel::detect();
    if kernel.is_none() {
        eprintln!("no AVX-512 IFMA on this CPU: the X25519 kernel is not tested");
    }
    kernel
}

/// One (scalar, u) pair in lane `lane`, the other lanes filled with unrelated inputs, so a
/// lane leaking into another shows.
fn in_lane(kernel: &Kernel, lane: usize, scalar: [u8; LEN], u: [u8; LEN]) -> [u8; LEN] {
    let mut scalars: [[u8; LEN]; LANES] = std::array::from_fn(|i| [i as u8 * 17 + 1; LEN]);
    let mut points: [[u8; LEN]; LANES] = std::array::from_fn(|i| [i as u8 * 29 + 3; LEN]);
    scalars[lane] = scalar;
    points[lane] = u;
    kernel.x25519(&scalars, &points)[lane]
}

/// aws-lc-rs's X25519, or `None` where it refuses (an all-zero result: a low-order point).
fn aws_lc(scalar: &[u8; LEN], u: &[u8; LEN]) -> Option<[u8; LEN]> {
    let private = PrivateKey::from_private_key(&X25519, scalar).expect("32-byte X25519 key");
    agreement::agree(&private, UnparsedPublicKey::new(&X25519, u), (), |secret| {
        secret.try_into().map_err(drop)
    })
    .ok()
}

/// Ours against aws-lc-rs for eight lanes of inputs at once.
fn check_against_aws_lc(
    kernel: &Kernel,
    scalars: &[[u8; LEN]; LANES],
    points: &[[u8; LEN]; LANES],
) {
    let ours = kernel.x25519(scalars, points);
    for lane in 0..LANES {
        let expected = aws_lc(&scalars[lane], &points[lane]).unwrap_or([0; LEN]);
        assert_eq!(
            ours[lane], expected,
            "lane {lane}: scalar {:02x?} u {:02x?}",
            scalars[lane], points[lane]
        );
    }
}

#[test]
fn rfc7748_section_5_2_vectors_in_every_lane() {
    let Some(kernel) = kernel() else { return };
    let vectors = [
        (
            "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
            "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
            "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
        ),
        (
            "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
            "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
            "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957",
        ),
    ];
    for (scalar, u, out) in vectors {
        for lane in 0..LANES {
            assert_eq!(
                in_lane(&kernel, lane, hex(scalar), hex(u)),
                hex(out),
                "lane {lane}"
            );
        }
    }
}

#[test]
fn rfc7748_section_5_2_iterated_1_and_1000() {
    let Some(kernel) = kernel() else { return };
    // Lane i starts i iterations behind lane 0 would complicate it: every lane iterates the
    // same chain, and the other lanes' garbage is replaced each round.
    let mut k = BASE_POINT;
    let mut u = BASE_POINT;
    for round in 1..=1000 {
        let next = in_lane(&kernel, round % LANES, k, u);
        u = k;
        k = next;
        if round == 1 {
            let one = "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079";
            assert_eq!(k, hex(one));
        }
    }
    let thousand = "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51";
    assert_eq!(k, hex(thousand));
}

#[test]
fn rfc7748_section_6_1_diffie_hellman() {
    if kernel().is_none() {
        assert!(x25519_x8(&[[0; LEN]; LANES], &[BASE_POINT; LANES]).is_none());
        return;
    }
    let alice = hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    let alice_public = hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    let bob = hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    let bob_public = hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
    let shared = hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
    // Lanes alternate between Alice and Bob.
    let scalars = std::array::from_fn(|i| if i % 2 == 0 { alice } else { bob });
    let publics = x25519_base_x8(&scalars).expect("the kernel exists");
    for (lane, public) in publics.iter().enumerate() {
        let expected = if lane % 2 == 0 {
            alice_public
        } else {
            bob_public
        };
        assert_eq!(*public, expected, "public key, lane {lane}");
    }
    let peers = std::array::from_fn(|i| if i % 2 == 0 { bob_public } else { alice_public });
    let secrets = x25519_x8(&scalars, &peers).expect("the kernel exists");
    assert_eq!(secrets, [shared; LANES]);
}

/// splitmix64: replayable random inputs.
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn bytes(&mut self) -> [u8; LEN] {
        let mut out = [0u8; LEN];
        for chunk in out.chunks_mut(8) {
            chunk.copy_from_slice(&self.next().to_le_bytes());
        }
        out
    }
}

#[test]
fn random_scalars_and_points_match_aws_lc() {
    let Some(kernel) = kernel() else { return };
    // 50 batches, 400 lanes; the u's top bit is random too (it must be ignored).
    let mut stream = Stream(25_519);
    for _ in 0..50 {
        let scalars = std::array::from_fn(|_| stream.bytes());
        let points = std::array::from_fn(|_| stream.bytes());
        check_against_aws_lc(&kernel, &scalars, &points);
    }
    // Public keys too: random scalars with the base point.
    for _ in 0..10 {
        let scalars = std::array::from_fn(|_| stream.bytes());
        check_against_aws_lc(&kernel, &scalars, &[BASE_POINT; LANES]);
    }
}

/// `v` little-endian, `p + delta` for small signed `delta`, with bit 255 optionally set.
fn p_plus(delta: i8, top_bit: bool) -> [u8; LEN] {
    // p = 2^255 − 19: ed ff … ff 7f.
    let mut out = [0xffu8; LEN];
    out[0] = 0xed;
    out[31] = 0x7f;
    let low = i16::from(out[0]) + i16::from(delta);
    out[0] = low as u8;
    if top_bit {
        out[31] |= 0x80;
    }
    out
}

#[test]
fn non_canonical_and_low_order_points_match_aws_lc() {
    let Some(kernel) = kernel() else { return };
    let small = |v: u8| {
        let mut u = [0u8; LEN];
        u[0] = v;
        u
    };
    let points = [
        small(0),
        small(1),
        // Points of order 8 on the curve (low order: the result is zero).
        hex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
        hex("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
        p_plus(-1, false),
        p_plus(0, false),
        p_plus(1, false),
        p_plus(18, false), // 2^255 − 1
        p_plus(9, true),   // p + 9 with bit 255 set: u = 9 after masking and reducing
        [0xff; LEN],
        small(9),
        {
            let mut u = BASE_POINT;
            u[31] = 0x80; // 9 with bit 255 set
            u
        },
    ];
    let mut stream = Stream(7);
    for chunk in points.chunks(LANES) {
        let mut batch: [[u8; LEN]; LANES] = std::array::from_fn(|_| stream.bytes());
        batch[..chunk.len()].copy_from_slice(chunk);
        let scalars = std::array::from_fn(|_| stream.bytes());
        check_against_aws_lc(&kernel, &scalars, &batch);
    }
    // Scalars at the clamping edges.
    let scalars = [
        [0u8; LEN],
        [0xff; LEN],
        small(1),
        small(8),
        [0x55; LEN],
        [0xaa; LEN],
        [0x80; LEN],
        [7; LEN],
    ];
    let points = std::array::from_fn(|_| stream.bytes());
    check_against_aws_lc(&kernel, &scalars, &points);
}
