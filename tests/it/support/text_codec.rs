//! A gRPC codec of UTF-8 text, so that the tests' tonic servers and clients need no
//! generated code.

use bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// Messages are UTF-8 text.
#[derive(Clone, Copy, Default)]
pub struct TextCodec;

impl Codec for TextCodec {
    type Encode = String;
    type Decode = String;
    type Encoder = TextCodec;
    type Decoder = TextCodec;

    fn encoder(&mut self) -> TextCodec {
        TextCodec
    }

    fn decoder(&mut self) -> TextCodec {
        TextCodec
    }
}

impl Encoder for TextCodec {
    type Item = String;
    type Error = Status;

    fn encode(&mut self, item: String, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(item.as_bytes());
        Ok(())
    }
}

impl Decoder for TextCodec {
    type Item = String;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<String>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|e| Status::internal(e.to_string()))
    }
}
