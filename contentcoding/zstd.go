package contentcoding

import (
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// ZstdEncoder compresses whole zstd frames of a fixed window, optionally
// against a raw dictionary: the capture store's body codec. Making one
// allocates megabytes of tables, so callers keep them for reuse. Not safe
// for concurrent use.
type ZstdEncoder struct{ e *zstd.Encoder }

// NewZstdEncoder returns an encoder of frames that may refer back window
// bytes, against dict (none when empty) under dictID, without checksums.
func NewZstdEncoder(window int, dictID uint32, dict []byte) (*ZstdEncoder, error) {
	opts := []zstd.EOption{zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithWindowSize(window)}
	if len(dict) > 0 {
		opts = append(opts, zstd.WithEncoderDictRaw(dictID, dict))
	}
	e, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return &ZstdEncoder{e: e}, nil
}

// SetDict makes dict (under dictID) the raw dictionary of the frames that
// follow; the window stays as made.
func (z *ZstdEncoder) SetDict(dictID uint32, dict []byte) error {
	if err := z.e.ResetWithOptions(nil, zstd.WithEncoderDictRaw(dictID, dict)); err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	return nil
}

// EncodeAll appends src as one frame to dst.
func (z *ZstdEncoder) EncodeAll(src, dst []byte) []byte { return z.e.EncodeAll(src, dst) }

// Close releases the encoder's resources.
func (z *ZstdEncoder) Close() { z.e.Close() }

// ZstdDecoder decompresses whole zstd frames with a window of up to 1 GiB,
// optionally against a raw dictionary. Not safe for concurrent use.
type ZstdDecoder struct{ d *zstd.Decoder }

// NewZstdDecoder returns a decoder, against dict under dictID when dict is
// not empty.
func NewZstdDecoder(dictID uint32, dict []byte) (*ZstdDecoder, error) {
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1 << 30)}
	if len(dict) > 0 {
		opts = append(opts, zstd.WithDecoderDictRaw(dictID, dict))
	}
	d, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return &ZstdDecoder{d: d}, nil
}

// DecodeAll appends the decompressed frames of src to dst.
func (z *ZstdDecoder) DecodeAll(src, dst []byte) ([]byte, error) { return z.d.DecodeAll(src, dst) }

// Close releases the decoder's resources.
func (z *ZstdDecoder) Close() { z.d.Close() }
