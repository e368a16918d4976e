//! The `wire_enum!` macro that every numeric vocabulary of the wire is declared with.
//!
//! Each generated enum is `#[repr(i32)]`, keeps the Java member names, and gets `ALL`, `name`,
//! `TryFrom<i32>`, `From<_> for i32`, [`Codec`] and (for tests and the `arbitrary` feature) a
//! proptest strategy. An unknown number is a [`DecodeError::UnknownValue`], never a panic and
//! never a silent default: the server decides what ZooKeeper answers for it (often
//! `MarshallingError` or `BadArguments`).
//!
//! [`Codec`]: crate::Codec
//! [`DecodeError::UnknownValue`]: crate::DecodeError::UnknownValue

/// Declares a wire enum; see the module documentation for what it derives.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i32)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value ),+
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name used by the Java server.
            pub const fn name(self) -> &'static str {
                match self { $($name::$variant => stringify!($variant)),+ }
            }
        }

        impl TryFrom<i32> for $name {
            type Error = $crate::codec::DecodeError;
            fn try_from(value: i32) -> Result<Self, $crate::codec::DecodeError> {
                match value {
                    $(v if v == $value => Ok($name::$variant),)+
                    _ => Err($crate::codec::DecodeError::UnknownValue {
                        kind: stringify!($name),
                        value: value.into(),
                    }),
                }
            }
        }

        impl From<$name> for i32 {
            fn from(value: $name) -> i32 {
                value as i32
            }
        }

        impl $crate::codec::Codec for $name {
            const MIN_SIZE: usize = 4;
            fn decode(buf: &mut &[u8]) -> Result<Self, $crate::codec::DecodeError> {
                $name::try_from(<i32 as $crate::codec::Codec>::decode(buf)?)
            }
            fn encode(&self, buf: &mut Vec<u8>) {
                $crate::codec::Codec::encode(&(*self as i32), buf);
            }
        }

        #[cfg(any(test, feature = "arbitrary"))]
        impl proptest::arbitrary::Arbitrary for $name {
            type Parameters = ();
            type Strategy = proptest::sample::Select<$name>;
            fn arbitrary_with(_: ()) -> Self::Strategy {
                proptest::sample::select($name::ALL)
            }
        }
    };
}

pub(crate) use wire_enum;

#[cfg(test)]
mod tests {
    use crate::{CreateMode, ErrorCode, OpCode};

    #[test]
    fn unknown_values_are_errors() {
        assert!(OpCode::try_from(10).is_err());
        assert!(OpCode::try_from(55).is_err());
        assert_eq!(OpCode::try_from(106), Ok(OpCode::AddWatch));
        assert!(CreateMode::try_from(7).is_err());
        assert_eq!(ErrorCode::try_from(-101), Ok(ErrorCode::NoNode));
    }

    #[test]
    fn every_member_round_trips() {
        for &op in OpCode::ALL {
            assert_eq!(OpCode::try_from(i32::from(op)), Ok(op));
        }
        for &e in ErrorCode::ALL {
            assert_eq!(ErrorCode::try_from(i32::from(e)), Ok(e));
        }
    }
}
