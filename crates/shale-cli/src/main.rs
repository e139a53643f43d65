//! `shale`: the admin tool of the Shale storage engine. A thin binary: all
//! of it lives in the `shale_cli` library.

fn main() {
    std::process::exit(shale_cli::run(std::env::args_os()));
}
