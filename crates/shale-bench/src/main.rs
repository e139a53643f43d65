//! The `shale-bench` binary: forwards its arguments to `shale_bench::run`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match shale_bench::run(&args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("shale-bench: {e}");
            std::process::exit(1);
        }
    }
}
