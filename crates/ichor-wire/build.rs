//! Compiles the .proto files with protox (pure Rust, no system protoc) and generates the tonic
//! client and server, plus the descriptor set that server reflection serves.

use prost::Message;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The .proto files stay at the workspace's root (proto/), where the other peers read them.
    let protos = [
        "../../proto/ichor/v1alpha1/operation.proto",
        "../../proto/ichor/v1alpha1/cluster.proto",
    ];
    for p in protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let fds = protox::compile(protos, ["../../proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("ichor_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
