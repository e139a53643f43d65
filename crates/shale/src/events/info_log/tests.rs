use super::*;

#[test]
fn dates_and_escaping() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(20_000), (2024, 10, 4));
    assert_eq!(json_escape("a\"b\\c\n"), "a\\\"b\\\\c\\u000a");
    let ts = timestamp();
    assert_eq!(ts.len(), 26);
}
