//! The one declaration of every option (the machinery; the declarations
//! are in `options` and, for blob files, `blob::options`, which is why it
//! lives here, below both): [`declare_options!`] takes, per
//! option struct, each field's doc, name, type, default, text name and
//! section in the OPTIONS file (and the MANIFEST's options text), whether
//! `Db::set_options` / `Db::set_db_options` may change it while the DB is
//! open, and its own validation, and derives from that list:
//!
//! - the struct with its docs, and `Default`;
//! - the `name=value` lines of the persisted text (`text_lines`) and their
//!   parsing (`set_text`), through [`TextValue`], one impl per field type;
//! - the typed change enum of the options that change while open (one
//!   variant per such field, documented as the field), with `name`,
//!   `apply` and `from_field` (from which the string form is parsed into
//!   a typed change);
//! - the list of options ([`Declared`], `DECLARED`), from which the option
//!   names and the mutable subset are read;
//! - the per-field checks (`check_fields`); checks across fields stay in
//!   each struct's `validate`.
//!
//! Field syntax, one per option, in the order the text is written:
//!
//! ```text
//! /// doc
//! field / Variant: Type = default, MUTABILITY PERSIST [SECTION "text name"]
//!     [, check(v) bad_condition => message];
//! ```
//!
//! MUTABILITY is `mutable` (changes while open; gets a variant) or `fixed`
//! (only at open). PERSIST is `always` (a line whatever the value),
//! `sparse` (a line only when the text differs from the default's, so
//! text written before the option existed reads the same), `group` (a
//! nested struct declared with this macro, its lines prefixed by the text
//! name) or `none` (not persisted: code, shared objects, open-time
//! switches). SECTION places the line in the OPTIONS file ([`Section`]).

use crate::error::{Error, Result};

/// Where a persisted option's line goes in the OPTIONS file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    /// A family's `[CFOptions "name"]` section.
    Cf,
    /// A family's `[TableOptions/BlockBasedTable "name"]` section (the
    /// table format, RocksDB's `BlockBasedTableOptions`).
    Table,
    /// `[DBOptions]`.
    Db,
    /// A DB-wide option written in the `default` family's table section
    /// (RocksDB keeps the block cache and readahead there).
    DefaultTable,
    /// A DB-wide option written in the `default` family's `[CFOptions]`
    /// section (RocksDB's place for `num_levels`).
    DefaultCf,
}

/// How an option is persisted.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Persist {
    /// Not in the OPTIONS file nor the MANIFEST.
    None,
    /// Always written, under this name.
    Always(Section, &'static str),
    /// Written when its text differs from the default's.
    Sparse(Section, &'static str),
    /// A nested option struct: its options' names prefixed by this.
    Group(Section, &'static str, &'static [Declared]),
}

/// One declared option.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared {
    /// The Rust field.
    pub field: &'static str,
    /// Changes while the DB is open (`Db::set_options` / `set_db_options`).
    pub mutable: bool,
    pub persist: Persist,
}

/// One persisted `name=value` line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub section: Section,
    pub name: String,
    pub value: String,
}

/// A declared option's text name and the Rust field path it sets
/// (`compaction_options_fifo.ttl` ↔ `compaction_options_fifo.ttl_secs`),
/// each with its mutability, for every persisted option of `decl`
/// (groups flattened); `mutable` is the group field's for its members.
pub(crate) fn flatten(decl: &'static [Declared]) -> Vec<(String, String, bool, Section)> {
    let mut out = Vec::new();
    for d in decl {
        match d.persist {
            Persist::None => {}
            Persist::Always(s, n) | Persist::Sparse(s, n) => {
                out.push((n.to_string(), d.field.to_string(), d.mutable, s))
            }
            Persist::Group(s, prefix, inner) => {
                for (n, f, _, _) in flatten(inner) {
                    out.push((
                        format!("{prefix}{n}"),
                        format!("{}.{f}", d.field),
                        d.mutable,
                        s,
                    ));
                }
            }
        }
    }
    out
}

/// Every field of `decl`, groups flattened (`blob.min_blob_size`), with
/// its text name if persisted: the whole list of options a struct has.
pub(crate) fn fields(decl: &'static [Declared]) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for d in decl {
        match d.persist {
            Persist::None => out.push((d.field.to_string(), None)),
            Persist::Always(_, n) | Persist::Sparse(_, n) => {
                out.push((d.field.to_string(), Some(n.to_string())))
            }
            Persist::Group(_, prefix, inner) => {
                for (f, n) in fields(inner) {
                    out.push((
                        format!("{}.{f}", d.field),
                        n.map(|n| format!("{prefix}{n}")),
                    ));
                }
            }
        }
    }
    out
}

/// One declared option (`CfOptions::option_infos`,
/// `Options::db_option_infos`): the list that bindings and tools check
/// their own option tables against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionInfo {
    /// The Rust field, with the group for a nested one
    /// (`write_buffer_size`, `compaction_options_fifo.ttl_secs`,
    /// `blob.min_blob_size`).
    pub field: String,
    /// The name in the OPTIONS file and the string API
    /// (`compaction_options_fifo.ttl`); `None` for an option not persisted
    /// (objects and code supplied at each open, open-time switches).
    pub name: Option<String>,
    /// Changes while the DB is open (`Db::set_options`,
    /// `Db::set_db_options`).
    pub mutable: bool,
}

impl OptionInfo {
    /// Every option of `decl`, groups flattened.
    pub(crate) fn of(decl: &'static [Declared]) -> Vec<OptionInfo> {
        let mutable: Vec<(String, bool)> = flatten(decl)
            .into_iter()
            .map(|(_, f, m, _)| (f, m))
            .collect();
        fields(decl)
            .into_iter()
            .map(|(field, name)| OptionInfo {
                mutable: mutable.iter().any(|(f, m)| *f == field && *m),
                field,
                name,
            })
            .collect()
    }
}

/// The typed change (`Change::from_field`) that setting option `name`
/// to its text `v` makes to `current` (`set_text`); `InvalidArgument` for
/// a bad value, an unknown name or one of an option that changes only on
/// reopen (`what`: the call, for the message).
pub(crate) fn parse_change<O: Clone, C>(
    decl: &'static [Declared],
    current: &O,
    name: &str,
    v: &str,
    set: impl FnOnce(&mut O, &str, &str) -> Result<bool>,
    from_field: impl FnOnce(&str, &O) -> Option<C>,
    what: &str,
) -> Result<C> {
    let found = flatten(decl).into_iter().find(|(n, ..)| n == name);
    let Some((_, field, mutable, _)) = found else {
        return Err(Error::InvalidArgument(format!(
            "{what}: unknown option {name:?}"
        )));
    };
    if !mutable {
        return Err(Error::InvalidArgument(format!(
            "{what}: {name} cannot change while the DB is open (reopen with it)"
        )));
    }
    let mut o = current.clone();
    set(&mut o, name, v)?;
    let top = field.split('.').next().unwrap_or(&field);
    from_field(top, &o)
        .ok_or_else(|| Error::InvalidArgument(format!("{what}: {name} has no typed change")))
}

/// The `InvalidArgument` of a value that does not parse as its option's.
pub(crate) fn bad_value(name: &str, v: &str) -> Error {
    Error::InvalidArgument(format!("option {name}: bad value {v:?}"))
}

/// An option value as the persisted `name=value` text holds it.
pub(crate) trait TextValue {
    fn text(&self) -> String;
    /// Parses `v` into `self`; `name` is the option's (for the error).
    fn set(&mut self, name: &str, v: &str) -> Result<()>;
}

/// Declares an option struct: see the module comment.
macro_rules! declare_options {
    (
        $(#[$smeta:meta])*
        pub struct $Name:ident;
        $(
            $(#[$emeta:meta])*
            pub enum $Change:ident;
        )?
        {
            $(
                $(#[$fmeta:meta])*
                $field:ident / $Variant:ident : $ty:ty = $default:expr,
                    $mutability:ident $persist:ident $($section:ident $text:literal)?
                    $(, check($v:ident) $bad:expr => $msg:expr)?
                    ;
            )*
        }
    ) => {
        $(#[$smeta])*
        pub struct $Name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl Default for $Name {
            fn default() -> Self {
                $Name { $( $field: $default, )* }
            }
        }

        declare_options!(@change
            [$( $(#[$emeta])* $Change )? for $Name] [] []
            $( $mutability $field $Variant [$(#[$fmeta])*] ($ty) ; )*
        );

        #[allow(dead_code)]
        impl $Name {
            /// Every option of the struct, in declaration order.
            pub(crate) const DECLARED: &'static [$crate::base::declare::Declared] = &[
                $(
                    $crate::base::declare::Declared {
                        field: stringify!($field),
                        mutable: declare_options!(@mutable $mutability),
                        persist: declare_options!(@persist ($ty) $persist $($section $text)?),
                    },
                )*
            ];

            /// The persisted `name=value` lines, in declaration order.
            #[allow(clippy::vec_init_then_push)]
            pub(crate) fn text_lines(&self) -> Vec<$crate::base::declare::Line> {
                #[allow(unused_imports)]
                use $crate::base::declare::TextValue as _;
                let d = Self::default();
                let mut out = Vec::new();
                $( declare_options!(@line self d out $field $persist $($section $text)?); )*
                let _ = &d;
                out
            }

            /// Sets the option whose text name is `name` from `v`
            /// (`full`: the name as given, for errors); `Ok(false)` when
            /// `name` is not one of this struct's.
            pub(crate) fn set_text(
                &mut self,
                name: &str,
                full: &str,
                v: &str,
            ) -> $crate::error::Result<bool> {
                #[allow(unused_imports)]
                use $crate::base::declare::TextValue as _;
                $( declare_options!(@set self name full v $field $persist $($section $text)?); )*
                let _ = (name, full, v);
                Ok(false)
            }

            /// Each field's own check, in declaration order.
            pub(crate) fn check_fields(&self) -> $crate::error::Result<()> {
                $($(
                    {
                        let $v = &self.$field;
                        if $bad {
                            return Err($crate::error::Error::InvalidArgument($msg));
                        }
                    }
                )?)*
                Ok(())
            }
        }
    };

    (@mutable mutable) => { true };
    (@mutable fixed) => { false };

    (@persist ($ty:ty) none) => { $crate::base::declare::Persist::None };
    (@persist ($ty:ty) always $section:ident $text:literal) => {
        $crate::base::declare::Persist::Always($crate::base::declare::Section::$section, $text)
    };
    (@persist ($ty:ty) sparse $section:ident $text:literal) => {
        $crate::base::declare::Persist::Sparse($crate::base::declare::Section::$section, $text)
    };
    (@persist ($ty:ty) group $section:ident $text:literal) => {
        $crate::base::declare::Persist::Group(
            $crate::base::declare::Section::$section,
            $text,
            <$ty>::DECLARED,
        )
    };

    (@line $s:ident $d:ident $out:ident $field:ident none) => {};
    (@line $s:ident $d:ident $out:ident $field:ident always $section:ident $text:literal) => {
        $out.push($crate::base::declare::Line {
            section: $crate::base::declare::Section::$section,
            name: $text.to_string(),
            value: $s.$field.text(),
        });
    };
    (@line $s:ident $d:ident $out:ident $field:ident sparse $section:ident $text:literal) => {
        let value = $s.$field.text();
        if value != $d.$field.text() {
            $out.push($crate::base::declare::Line {
                section: $crate::base::declare::Section::$section,
                name: $text.to_string(),
                value,
            });
        }
    };
    (@line $s:ident $d:ident $out:ident $field:ident group $section:ident $text:literal) => {
        for l in $s.$field.text_lines() {
            $out.push($crate::base::declare::Line {
                section: $crate::base::declare::Section::$section,
                name: format!("{}{}", $text, l.name),
                value: l.value,
            });
        }
    };

    (@set $s:ident $name:ident $full:ident $v:ident $field:ident none) => {};
    (@set $s:ident $name:ident $full:ident $v:ident $field:ident group $section:ident $text:literal) => {
        if let Some(rest) = $name.strip_prefix($text) {
            if $s.$field.set_text(rest, $full, $v)? {
                return Ok(true);
            }
        }
    };
    (@set $s:ident $name:ident $full:ident $v:ident $field:ident $p:ident $section:ident $text:literal) => {
        if $name == $text {
            $s.$field.set($full, $v)?;
            return Ok(true);
        }
    };

    // The change enum: only the `mutable` fields, gathered one by one.
    (@change [$($head:tt)*] [$($variants:tt)*] [$($arms:tt)*]
        mutable $field:ident $Variant:ident [$($doc:tt)*] ($ty:ty) ; $($rest:tt)*) => {
        declare_options!(@change [$($head)*] [$($variants)* $($doc)* $Variant($ty),]
            [$($arms)* ($field $Variant)] $($rest)*);
    };
    (@change [$($head:tt)*] [$($variants:tt)*] [$($arms:tt)*]
        fixed $field:ident $Variant:ident [$($doc:tt)*] ($ty:ty) ; $($rest:tt)*) => {
        declare_options!(@change [$($head)*] [$($variants)*] [$($arms)*] $($rest)*);
    };
    (@change [for $Name:ident] [$($variants:tt)*] [$($arms:tt)*]) => {};
    (@change [$(#[$emeta:meta])* $Change:ident for $Name:ident] [$($variants:tt)*]
        [$(($field:ident $Variant:ident))*]) => {
        $(#[$emeta])*
        pub enum $Change {
            $($variants)*
        }

        impl $Change {
            /// The option's name (as in the OPTIONS file).
            pub fn name(&self) -> &'static str {
                match self {
                    $( $Change::$Variant(_) => stringify!($field), )*
                }
            }

            /// Sets the option in `o` (what `Db::set_options` does to a
            /// copy of the options in force, before validating it whole).
            pub fn apply(self, o: &mut $Name) {
                match self {
                    $( $Change::$Variant(v) => o.$field = v, )*
                }
            }

            /// The change that sets field `field` to its value in `o`;
            /// `None` for a field without a variant.
            pub(crate) fn from_field(field: &str, o: &$Name) -> Option<Self> {
                match field {
                    $( stringify!($field) => Some($Change::$Variant(o.$field.clone())), )*
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use declare_options;

macro_rules! parsed_value {
    ($($t:ty),*) => {$(
        impl TextValue for $t {
            fn text(&self) -> String {
                self.to_string()
            }
            fn set(&mut self, name: &str, v: &str) -> Result<()> {
                *self = v.parse().map_err(|_| bad_value(name, v))?;
                Ok(())
            }
        }
    )*};
}
parsed_value!(u32, i32, u64, usize, f64, bool);
