//! The per-session faults, in report order, with how often each is drawn.

/// One per-session fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `close_connection`.
    Cut,
    /// `Fault::ApplyThenDrop`.
    LostReply,
    /// `Fault::DropBeforeApply`.
    DropRequest,
    /// `Fault::Delay`.
    Delay,
    /// A freeze shorter than the session timeout.
    ShortFreeze,
    /// A freeze past the session timeout.
    LongFreeze,
    /// `expire_session`.
    Expire,
    /// A holder paused past its session timeout, then writing.
    HolderPause,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [FaultKind; 8] = [
        FaultKind::Cut,
        FaultKind::LostReply,
        FaultKind::DropRequest,
        FaultKind::Delay,
        FaultKind::ShortFreeze,
        FaultKind::LongFreeze,
        FaultKind::Expire,
        FaultKind::HolderPause,
    ];

    /// Its name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Cut => "cut",
            FaultKind::LostReply => "lost-reply",
            FaultKind::DropRequest => "dropped-request",
            FaultKind::Delay => "delay",
            FaultKind::ShortFreeze => "short-freeze",
            FaultKind::LongFreeze => "long-freeze",
            FaultKind::Expire => "expiry",
            FaultKind::HolderPause => "holder-pause",
        }
    }

    /// Whether it may end the session it hits: by design (a long freeze, an expiry, a pause),
    /// or by coming near the timeout (a short freeze after a quiet spell). Spared sessions
    /// never get one.
    pub fn may_end_session(self) -> bool {
        matches!(
            self,
            FaultKind::ShortFreeze
                | FaultKind::LongFreeze
                | FaultKind::Expire
                | FaultKind::HolderPause
        )
    }

    /// How often the nemesis picks it, relative to the others. Expiries and long freezes each
    /// end a session, so they are rarer than the faults a session survives.
    pub(super) fn weight(self) -> u32 {
        match self {
            FaultKind::Cut | FaultKind::LostReply | FaultKind::DropRequest => 4,
            FaultKind::Delay => 3,
            FaultKind::ShortFreeze => 2,
            FaultKind::LongFreeze | FaultKind::Expire | FaultKind::HolderPause => 1,
        }
    }
}
