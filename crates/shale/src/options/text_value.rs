//! How each option type is written in, and parsed from, the persisted
//! `name=value` text ([`TextValue`], used by every `declare_options!`
//! struct). Numbers and switches are written as Rust prints them; the
//! rest by RocksDB's names. The formats are the OPTIONS file's and the
//! MANIFEST's: changing one changes what is on disk.

use std::sync::Arc;

use super::compaction_types::{CompactionStyle, UniversalStopStyle};
use crate::base::declare::{bad_value, TextValue};
use crate::base::PrefixExtractor;
use crate::build::cuts::SstPartitioner;
use crate::build::user_filter::CompactionFilter;
use crate::error::Result;
use crate::events::log_options::InfoLogLevel;
use crate::merge::MergeOperator;
use crate::sst::Compression;
use crate::wal::WalRecoveryMode;

use super::CacheType;

/// The value of an optional object that is not set.
const NONE: &str = "nullptr";

impl TextValue for UniversalStopStyle {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = UniversalStopStyle::parse(v).map_err(|_| bad_value(name, v))?;
        Ok(())
    }
}

impl TextValue for CompactionStyle {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, _name: &str, v: &str) -> Result<()> {
        *self = CompactionStyle::parse(v)?;
        Ok(())
    }
}

/// Per-level compressions, `:`-separated (`NoCompression:LZ4`).
impl TextValue for Vec<Compression> {
    fn text(&self) -> String {
        let v: Vec<&str> = self.iter().map(|c| c.name()).collect();
        v.join(":")
    }
    fn set(&mut self, _name: &str, v: &str) -> Result<()> {
        *self = v
            .split(':')
            .map(Compression::parse)
            .collect::<Result<Vec<_>>>()?;
        Ok(())
    }
}

/// The bottommost level's compression; `Disabled`: the level's own.
impl TextValue for Option<Compression> {
    fn text(&self) -> String {
        self.map_or("Disabled", |c| c.name()).to_string()
    }
    fn set(&mut self, _name: &str, v: &str) -> Result<()> {
        *self = match v {
            "Disabled" => None,
            c => Some(Compression::parse(c)?),
        };
        Ok(())
    }
}

/// Numbers by level, `:`-separated.
impl TextValue for Vec<f64> {
    fn text(&self) -> String {
        let v: Vec<String> = self.iter().map(f64::to_string).collect();
        v.join(":")
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = v
            .split(':')
            .map(|x| x.parse().map_err(|_| bad_value(name, v)))
            .collect::<Result<Vec<f64>>>()?;
        Ok(())
    }
}

/// RocksDB's extractor names (`rocksdb.FixedPrefix.8`); `nullptr` or
/// nothing for none.
impl TextValue for Option<PrefixExtractor> {
    fn text(&self) -> String {
        self.map_or_else(|| NONE.to_string(), |e| e.name())
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = match v {
            NONE | "" => None,
            n => Some(PrefixExtractor::parse(n).ok_or_else(|| bad_value(name, v))?),
        };
        Ok(())
    }
}

/// RocksDB's partitioner text (`{id=SstPartitionerFixedPrefixFactory;length=6;}`).
impl TextValue for Option<SstPartitioner> {
    fn text(&self) -> String {
        self.map_or_else(|| NONE.to_string(), |p| p.name())
    }
    fn set(&mut self, _name: &str, v: &str) -> Result<()> {
        *self = match v {
            NONE | "" => None,
            t => Some(SstPartitioner::parse(t)?),
        };
        Ok(())
    }
}

/// A switch whose unset value means "the default for the style"; only a
/// set value is written.
impl TextValue for Option<bool> {
    fn text(&self) -> String {
        self.map_or_else(|| NONE.to_string(), |b| b.to_string())
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = Some(v.parse().map_err(|_| bad_value(name, v))?);
        Ok(())
    }
}

/// By name: a shipped operator comes back (`crate::merge::from_name`);
/// another must be supplied by the program (`tools::load_latest_options`).
impl TextValue for Option<Arc<dyn MergeOperator>> {
    fn text(&self) -> String {
        self.as_ref()
            .map_or_else(|| NONE.to_string(), |m| m.name().to_string())
    }
    fn set(&mut self, _name: &str, v: &str) -> Result<()> {
        *self = crate::merge::from_name(v);
        Ok(())
    }
}

/// By name; parsing leaves the filter as it is: code, not data, that the
/// program supplies again.
impl TextValue for Option<Arc<dyn CompactionFilter>> {
    fn text(&self) -> String {
        self.as_ref()
            .map_or_else(|| NONE.to_string(), |f| f.name().to_string())
    }
    fn set(&mut self, _name: &str, _v: &str) -> Result<()> {
        Ok(())
    }
}

impl TextValue for WalRecoveryMode {
    fn text(&self) -> String {
        format!("{self:?}")
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = [
            WalRecoveryMode::TolerateCorruptedTailRecords,
            WalRecoveryMode::AbsoluteConsistency,
            WalRecoveryMode::PointInTime,
            WalRecoveryMode::SkipAnyCorruptedRecords,
        ]
        .into_iter()
        .find(|m| format!("{m:?}") == v)
        .ok_or_else(|| bad_value(name, v))?;
        Ok(())
    }
}

impl TextValue for InfoLogLevel {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = [
            InfoLogLevel::Debug,
            InfoLogLevel::Info,
            InfoLogLevel::Warn,
            InfoLogLevel::Error,
            InfoLogLevel::Fatal,
            InfoLogLevel::Header,
        ]
        .into_iter()
        .find(|l| l.name() == v)
        .ok_or_else(|| bad_value(name, v))?;
        Ok(())
    }
}

impl TextValue for CacheType {
    fn text(&self) -> String {
        format!("{self:?}")
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = match v {
            "Lru" => CacheType::Lru,
            "Clock" => CacheType::Clock,
            _ => return Err(bad_value(name, v)),
        };
        Ok(())
    }
}
