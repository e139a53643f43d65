use super::*;

fn footer() -> Footer {
    Footer {
        metaindex: BlockHandle {
            offset: 123_456,
            size: 77,
        },
        index: BlockHandle {
            offset: u64::MAX / 3,
            size: u64::MAX,
        },
        checksum_base: 0xdead_beef,
        format_version: FORMAT_VERSION,
    }
}

#[test]
fn handle_roundtrip_and_garbage() {
    let h = BlockHandle {
        offset: u64::MAX,
        size: u64::MAX,
    };
    let mut b = Vec::new();
    h.encode_to(&mut b);
    assert_eq!(b.len(), MAX_HANDLE_LEN);
    assert_eq!(BlockHandle::decode_exact(&b), Some(h));
    b.push(0);
    assert_eq!(BlockHandle::decode_exact(&b), None);
    assert_eq!(BlockHandle::decode_exact(&[0x80]), None);
    assert_eq!(h.end_with_trailer(), u64::MAX);
}

#[test]
fn footer_roundtrip() {
    let mut b = vec![9u8; 3];
    footer().encode_to(&mut b);
    assert_eq!(b.len(), 3 + FOOTER_LEN);
    assert_eq!(Footer::decode(&b[3..], "f", 0).unwrap(), footer());
    // The magic is the last 8 bytes, little-endian.
    assert_eq!(&b[b.len() - 8..], &MAGIC.to_le_bytes());
}

#[test]
fn footer_rejects_damage_with_the_right_error() {
    let mut good = Vec::new();
    footer().encode_to(&mut good);
    for i in 0..FOOTER_LEN {
        let mut b = good.clone();
        b[i] ^= 0x10;
        let e = Footer::decode(&b, "000007.sst", 500).unwrap_err();
        match e {
            Error::Corruption { file, offset, .. } => {
                assert_eq!(file, "000007.sst");
                assert_eq!(offset, 500);
            }
            other => panic!("byte {i}: expected corruption, got {other:?}"),
        }
    }
    // A well-formed footer of an unknown version is NotSupported (0 and
    // the version after this build's); every version it wrote reads.
    for unknown in [0, FORMAT_VERSION + 1] {
        let mut b = Vec::new();
        Footer {
            format_version: unknown,
            ..footer()
        }
        .encode_to(&mut b);
        assert!(matches!(
            Footer::decode(&b, "f", 0),
            Err(Error::NotSupported(_))
        ));
    }
    for known in OLDEST_FORMAT_VERSION..=FORMAT_VERSION {
        let mut b = Vec::new();
        Footer {
            format_version: known,
            ..footer()
        }
        .encode_to(&mut b);
        assert_eq!(Footer::decode(&b, "f", 0).unwrap().format_version, known);
    }
    let mut b = Vec::new();
    Footer {
        format_version: FORMAT_VERSION + 1,
        ..footer()
    }
    .encode_to(&mut b);
    assert!(Footer::decode(&b[1..], "f", 0).unwrap_err().is_corruption());
}

#[test]
fn checksum_binds_offset_base_and_type() {
    let data = b"some block bytes";
    let t = make_trailer(data, 0, 4096, 7);
    let mut buf = data.to_vec();
    buf.extend_from_slice(&t);
    assert_eq!(verify_block(&buf, 4096, 7, "f").unwrap(), 0);
    assert!(verify_block(&buf, 4097, 7, "f")
        .unwrap_err()
        .is_corruption());
    assert!(verify_block(&buf, 4096, 8, "f")
        .unwrap_err()
        .is_corruption());
    let mut other_type = buf.clone();
    other_type[data.len()] = 1;
    assert!(verify_block(&other_type, 4096, 7, "f")
        .unwrap_err()
        .is_corruption());
    assert!(verify_block(&buf[..4], 0, 7, "f")
        .unwrap_err()
        .is_corruption());
}
