//! With the `agones` feature, compiles the fake Agones SDK service that the
//! contract test (`tests/agones.rs`) serves; without it, does nothing, so a
//! plain build needs no `protoc`.

#[cfg(feature = "agones")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=tests/agones");
    tonic_build::configure()
        .build_client(false)
        .build_server(true)
        .compile_protos(
            &["tests/agones/sdk.proto", "tests/agones/beta.proto"],
            &["tests/agones"],
        )?;
    Ok(())
}

#[cfg(not(feature = "agones"))]
fn main() {}
