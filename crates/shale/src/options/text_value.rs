//! One option value as the persisted `name=value` text holds it: the
//! shared piece of the option groups (compaction style, blob files) that
//! list their fields once and write and parse them from that list.

use super::compaction_types::UniversalStopStyle;
use crate::blob::options::PrepopulateBlobCache;
use crate::sst::Compression;

/// A value written and parsed by an options list.
pub(super) trait TextValue {
    fn text(&self) -> String;
    /// `None` when `v` is not a value of this type.
    fn set(&mut self, v: &str) -> Option<()>;
}

macro_rules! parsed_value {
    ($($t:ty),*) => {$(
        impl TextValue for $t {
            fn text(&self) -> String {
                self.to_string()
            }
            fn set(&mut self, v: &str) -> Option<()> {
                *self = v.parse().ok()?;
                Some(())
            }
        }
    )*};
}
parsed_value!(u32, i32, u64, usize, f64, bool);

impl TextValue for UniversalStopStyle {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, v: &str) -> Option<()> {
        *self = UniversalStopStyle::parse(v).ok()?;
        Some(())
    }
}

impl TextValue for Compression {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, v: &str) -> Option<()> {
        *self = Compression::parse(v).ok()?;
        Some(())
    }
}

impl TextValue for PrepopulateBlobCache {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, v: &str) -> Option<()> {
        *self = PrepopulateBlobCache::parse(v)?;
        Some(())
    }
}
