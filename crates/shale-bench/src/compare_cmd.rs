//! The `compare` subcommand: `shale-bench compare A B [C ...] [--plot
//! FILE]`. Each side is a `--json` file or a comma-separated list of them.
//! With two sides it prints the table of `report::compare` (medians over a
//! side's files, B/A ratios); with more, one such table per later side
//! against A. `--plot FILE` (or `--plot=FILE`) also writes the SVG of
//! `plot`, one series per file of every side.

use std::path::PathBuf;

use crate::error::{bail, Result};
use crate::{plot, report};

const USAGE: &str =
    "usage: shale-bench compare A.json[,A2.json...] B.json[,B2.json...] [C.json ...] [--plot FILE.svg]";

/// The parsed arguments.
#[derive(Debug, PartialEq)]
struct Args {
    sides: Vec<String>,
    plot: Option<PathBuf>,
}

fn parse<S: AsRef<str>>(args: &[S]) -> Result<Args> {
    let mut sides = Vec::new();
    let mut plot = None;
    let mut it = args.iter().map(AsRef::as_ref);
    while let Some(a) = it.next() {
        let file = if a == "--plot" {
            match it.next() {
                Some(f) => f,
                None => bail!("--plot needs a file\n{USAGE}"),
            }
        } else if let Some(f) = a.strip_prefix("--plot=") {
            f
        } else if a.starts_with('-') {
            bail!("unknown compare flag '{a}'\n{USAGE}");
        } else {
            sides.push(a.to_string());
            continue;
        };
        if file.is_empty() || plot.is_some() {
            bail!("--plot takes one file\n{USAGE}");
        }
        plot = Some(PathBuf::from(file));
    }
    if sides.len() < 2 {
        bail!("{USAGE}");
    }
    Ok(Args { sides, plot })
}

/// Runs `compare` with `args` (after the word `compare`); returns the text
/// to print.
pub fn run<S: AsRef<str>>(args: &[S]) -> Result<String> {
    let a = parse(args)?;
    let first = &a.sides[0];
    let mut out = String::new();
    for (i, other) in a.sides.iter().enumerate().skip(1) {
        if i > 1 {
            out.push('\n');
        }
        out.push_str(&report::compare(first, other)?);
    }
    if let Some(path) = &a.plot {
        let files: Vec<PathBuf> = a
            .sides
            .iter()
            .flat_map(|s| s.split(','))
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect();
        plot::write(path, &files)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_and_plot_flag_in_any_position() {
        let a = parse(&["a.json,a2.json", "--plot", "o.svg", "b.json", "c.json"]).unwrap();
        assert_eq!(a.sides, ["a.json,a2.json", "b.json", "c.json"]);
        assert_eq!(a.plot, Some(PathBuf::from("o.svg")));
        let a = parse(&["--plot=o.svg", "a", "b"]).unwrap();
        assert_eq!(a.plot, Some(PathBuf::from("o.svg")));
        assert_eq!(parse(&["a", "b"]).unwrap().plot, None);
        for bad in [
            &["a"][..],
            &["a", "b", "--plot"],
            &["a", "b", "--plot="],
            &["a", "b", "--plot=x", "--plot=y"],
            &["a", "b", "--svg=x"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
