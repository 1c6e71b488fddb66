//! The generated gRPC types (package ichor.v1alpha1).
#![allow(clippy::all, clippy::pedantic, missing_docs)]

tonic::include_proto!("ichor.v1alpha1");

/// The encoded descriptor set, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("ichor_descriptor");
