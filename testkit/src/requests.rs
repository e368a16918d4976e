//! Requests as raw-peer tests write them most: short builders over `shepherd-protocol`'s
//! records, with open ACLs and unconditional versions.

use shepherd_protocol::{
    Acl, CreateMode, CreateRequest, PathWatchRequest, Request, SetDataRequest,
};

/// create `path` holding `data`, open to anyone.
pub fn create(path: &str, data: &[u8], mode: CreateMode) -> Request {
    Request::Create(CreateRequest {
        path: path.into(),
        data: Some(data.to_vec()),
        acl: Acl::open_unsafe(),
        flags: mode.into(),
    })
}

/// exists `path`, leaving a watch if `watch`.
pub fn exists(path: &str, watch: bool) -> Request {
    Request::Exists(PathWatchRequest {
        path: path.into(),
        watch,
    })
}

/// getData `path`, without a watch.
pub fn get_data(path: &str) -> Request {
    Request::GetData(PathWatchRequest {
        path: path.into(),
        watch: false,
    })
}

/// setData `path` to `data`, whatever its version.
pub fn set_data(path: &str, data: &[u8]) -> Request {
    Request::SetData(SetDataRequest {
        path: path.into(),
        data: Some(data.to_vec()),
        version: -1,
    })
}
