//! The `record!` macro that declares a jute record: a struct whose wire form is its fields back
//! to back, in declaration order, with nothing between them.
//!
//! Invariant: the field order of the struct *is* the wire order, so a record cannot be encoded
//! in one order and decoded in another; its `MIN_SIZE` is the sum of its fields', which bounds
//! vector counts before anything is allocated.

/// Defines a record: the struct, its [`Codec`](crate::Codec) (fields in order), and a proptest
/// strategy.
macro_rules! record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty ),+
        }

        impl $crate::codec::Codec for $name {
            const MIN_SIZE: usize = 0 $(+ <$ty as $crate::codec::Codec>::MIN_SIZE)+;
            fn decode(buf: &mut &[u8]) -> Result<Self, $crate::codec::DecodeError> {
                Ok($name { $( $field: <$ty as $crate::codec::Codec>::decode(buf)? ),+ })
            }
            fn encode(&self, buf: &mut Vec<u8>) {
                $( <$ty as $crate::codec::Codec>::encode(&self.$field, buf); )+
            }
        }

        #[cfg(any(test, feature = "arbitrary"))]
        impl proptest::arbitrary::Arbitrary for $name {
            type Parameters = ();
            type Strategy = proptest::strategy::BoxedStrategy<$name>;
            fn arbitrary_with(_: ()) -> Self::Strategy {
                use proptest::prelude::*;
                ( $( any::<$ty>(), )+ )
                    .prop_map(|( $($field,)+ )| $name { $($field),+ })
                    .boxed()
            }
        }
    };
}

pub(crate) use record;
