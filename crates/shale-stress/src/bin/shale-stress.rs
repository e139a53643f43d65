//! The `shale-stress` binary: a thin wrapper over `shale_stress::stress`.

fn main() {
    std::process::exit(shale_stress::stress::main(
        std::env::args().skip(1).collect(),
    ));
}
