use super::*;

#[test]
fn dates() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(20_000), (2024, 10, 4));
    let ts = timestamp();
    assert_eq!(ts.len(), 26);
}
