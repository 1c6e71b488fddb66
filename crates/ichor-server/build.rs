//! Compiles gRPC's standard health service (proto/grpc/health/v1/health.proto, with `List`,
//! which tonic-health's copy lacks) with protox, as ichor-wire compiles the API: the tonic
//! server and the descriptor set reflection serves.

use prost::Message;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "../../proto/grpc/health/v1/health.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["../../proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("health_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_client(false)
        .compile_fds(fds)?;
    Ok(())
}
