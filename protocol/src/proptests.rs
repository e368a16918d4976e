//! Property tests: every record survives encode → decode → compare, and arbitrary bytes fed to
//! every decoder neither panic nor allocate beyond the frame.

use crate::*;
use proptest::prelude::*;

/// Cases per property; kept modest so the whole suite stays fast on two cores.
const CASES: u32 = 256;

fn round_trip<T: Codec + PartialEq + std::fmt::Debug>(value: T) -> Result<(), TestCaseError> {
    let bytes = value.to_bytes();
    let mut cursor = bytes.as_slice();
    let decoded = T::decode(&mut cursor).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(cursor.is_empty(), "{} bytes left over", cursor.len());
    prop_assert_eq!(decoded, value);
    Ok(())
}

/// Decoding garbage may fail, but must not panic, and must not consume past the input.
fn never_panics<T: Codec>(bytes: &[u8]) {
    let mut cursor = bytes;
    let _ = T::decode(&mut cursor);
}

macro_rules! record_properties {
    ($($name:ident: $ty:ty),+ $(,)?) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(CASES))]
            $(
                #[test]
                fn $name(value in any::<$ty>(), garbage in proptest::collection::vec(any::<u8>(), 0..256)) {
                    round_trip(value)?;
                    never_panics::<$ty>(&garbage);
                }
            )+
        }
        /// The number of record types covered, reported by a test so the count is visible.
        pub(crate) const RECORD_TYPES: &[&str] = &[$(stringify!($ty)),+];
    };
}

record_properties! {
    id: Id,
    acl: Acl,
    stat: Stat,
    client_info: ClientInfo,
    connect_request: ConnectRequest,
    connect_response: ConnectResponse,
    request_header: RequestHeader,
    reply_header: ReplyHeader,
    create_request: CreateRequest,
    create_ttl_request: CreateTTLRequest,
    create_response: CreateResponse,
    create2_response: Create2Response,
    delete_request: DeleteRequest,
    path_watch_request: PathWatchRequest,
    path_request: PathRequest,
    stat_response: StatResponse,
    get_data_response: GetDataResponse,
    set_data_request: SetDataRequest,
    get_acl_response: GetACLResponse,
    set_acl_request: SetACLRequest,
    get_children_response: GetChildrenResponse,
    get_children2_response: GetChildren2Response,
    get_all_children_number_response: GetAllChildrenNumberResponse,
    check_version_request: CheckVersionRequest,
    multi_header: MultiHeader,
    multi_request: MultiRequest,
    multi_response: MultiResponse,
    auth_packet: AuthPacket,
    set_watches: SetWatches,
    set_watches2: SetWatches2,
    add_watch_request: AddWatchRequest,
    remove_watches_request: RemoveWatchesRequest,
    watcher_event: WatcherEvent,
    error_response: ErrorResponse,
    get_ephemerals_response: GetEphemeralsResponse,
    who_am_i_response: WhoAmIResponse,
    reconfig_request: ReconfigRequest,
    sasl_token: SaslToken,
    op_code: OpCode,
    error_code: ErrorCode,
    create_mode: CreateMode,
    event_type: EventType,
    keeper_state: KeeperState,
    watcher_type: WatcherType,
    add_watch_mode: AddWatchMode,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES * 4))]

    /// Every request survives the full payload path: header + body, decoded by opcode.
    #[test]
    fn requests_round_trip(request in any::<Request>(), xid in any::<i32>()) {
        let mut payload = Vec::new();
        encode_request(xid, &request, &mut payload);
        let (header, body) = decode_request(&payload).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(header.xid, xid);
        prop_assert_eq!(body, Ok(request));
    }

    /// Every response survives decoding with the opcode its request was sent with.
    #[test]
    fn responses_round_trip(response in any::<Response>(), xid in 1..i32::MAX, zxid in any::<i64>()) {
        let header = ReplyHeader { xid, zxid, err: 0 };
        let mut payload = Vec::new();
        encode_reply(&header, Some(&response), &mut payload);
        let op = response.op_code();
        let reply = decode_reply(&payload, |x| (x == xid).then_some(op));
        prop_assert_eq!(reply, Ok(Reply::Ok(header, response)));
    }

    /// Arbitrary payloads through the top-level decoders, with every opcode.
    #[test]
    fn arbitrary_payloads_never_panic(payload in proptest::collection::vec(any::<u8>(), 0..512), op in any::<OpCode>()) {
        let _ = decode_request(&payload);
        let _ = decode_reply(&payload, |_| Some(op));
        let mut cursor = payload.as_slice();
        let _ = Request::decode(op, &mut cursor);
        let mut cursor = payload.as_slice();
        let _ = Response::decode(op, &mut cursor);
    }

    /// Payloads that start like a real request but carry hostile lengths.
    #[test]
    fn hostile_lengths_are_bounded(op in any::<OpCode>(), len in any::<i32>(), tail in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut payload = Vec::new();
        RequestHeader { xid: 1, op_type: op.into() }.encode(&mut payload);
        len.encode(&mut payload);
        payload.extend_from_slice(&tail);
        // Must return (error or not) without trying to reserve `len` bytes: a huge
        // allocation would abort the test process.
        let _ = decode_request(&payload);
    }
}

#[test]
fn every_record_type_is_covered() {
    // Records of docs/protocol.md §5 (request and response bodies, headers, connect, multi, watches, auth,
    // reconfig, sasl) plus the seven wire enums.
    assert_eq!(RECORD_TYPES.len(), 45);
}
