# frozen_string_literal: true
#
# In-process Zstd and LZ4 for the benchmark, through Debian's ruby-ffi over the
# system libraries libzstd.so.1 (package libzstd1) and liblz4.so.1 (liblz4-1).
#
#   Zstd: one-shot compression at ZSTD_CLEVEL_DEFAULT (3) with a compression
#         and a decompression context created once and reused (ZSTD_compressCCtx,
#         ZSTD_decompressDCtx), as the zstd manual recommends for repeated calls.
#         A standard zstd frame: magic, header with the content size, no checksum
#         (what `zstd -3 --no-check` writes).
#   LZ4:  the block API, LZ4_compress_default (acceleration 1), preceded by the
#         uncompressed size as a 4-byte little-endian integer, because an LZ4
#         block does not carry it (the framing most message-oriented LZ4 wrappers use).
#
# Each call allocates exactly one Ruby String (the result); scratch buffers are
# reused per thread.
require "ffi"

module BenchCompress
  class Error < StandardError; end

  # Reusable native scratch buffer, grown on demand.
  class Scratch
    def initialize
      @ptr = FFI::MemoryPointer.new(:uint8, 1 << 16)
    end

    def get(size)
      @ptr = FFI::MemoryPointer.new(:uint8, [size, @ptr.size * 2].max) if size > @ptr.size
      @ptr
    end
  end

  module Zstd
    extend FFI::Library
    ffi_lib ["libzstd.so.1", "zstd"]
    attach_function :ZSTD_createCCtx, [], :pointer
    attach_function :ZSTD_createDCtx, [], :pointer
    attach_function :ZSTD_compressCCtx, %i[pointer pointer size_t buffer_in size_t int], :size_t
    attach_function :ZSTD_decompressDCtx, %i[pointer pointer size_t buffer_in size_t], :size_t
    attach_function :ZSTD_compressBound, %i[size_t], :size_t
    attach_function :ZSTD_getFrameContentSize, %i[buffer_in size_t], :ulong_long
    attach_function :ZSTD_isError, %i[size_t], :uint
    attach_function :ZSTD_getErrorName, %i[size_t], :string
    attach_function :ZSTD_versionString, [], :string
    attach_function :ZSTD_defaultCLevel, [], :int rescue nil # zstd >= 1.5.0

    LEVEL = respond_to?(:ZSTD_defaultCLevel) ? ZSTD_defaultCLevel() : 3
    CONTENTSIZE_ERROR = 0xFFFF_FFFF_FFFF_FFFE
    CONTENTSIZE_UNKNOWN = 0xFFFF_FFFF_FFFF_FFFF

    # One context pair for the process (the benchmark is single-threaded); never freed.
    @cctx = ZSTD_createCCtx()
    @dctx = ZSTD_createDCtx()
    @scratch = Scratch.new
    class << self
      def version = ZSTD_versionString()

      def compress(src, level = LEVEL)
        cap = ZSTD_compressBound(src.bytesize)
        dst = @scratch.get(cap)
        n = ZSTD_compressCCtx(@cctx, dst, cap, src, src.bytesize, level)
        raise Error, "ZSTD_compressCCtx: #{ZSTD_getErrorName(n)}" if ZSTD_isError(n) != 0
        dst.read_bytes(n)
      end

      def decompress(src)
        size = ZSTD_getFrameContentSize(src, src.bytesize)
        raise Error, "zstd: frame without a content size" if size >= CONTENTSIZE_ERROR
        dst = @scratch.get(size)
        n = ZSTD_decompressDCtx(@dctx, dst, size, src, src.bytesize)
        raise Error, "ZSTD_decompressDCtx: #{ZSTD_getErrorName(n)}" if ZSTD_isError(n) != 0
        dst.read_bytes(n)
      end
    end
  end

  module LZ4
    extend FFI::Library
    ffi_lib ["liblz4.so.1", "lz4"]
    attach_function :LZ4_compress_default, %i[buffer_in pointer int int], :int
    attach_function :LZ4_decompress_safe, %i[buffer_in pointer int int], :int
    attach_function :LZ4_compressBound, %i[int], :int
    attach_function :LZ4_versionString, [], :string

    MAX_INPUT = 0x7E00_0000 # LZ4_MAX_INPUT_SIZE

    @scratch = Scratch.new
    class << self
      def version = LZ4_versionString()

      def compress(src)
        len = src.bytesize
        raise Error, "lz4: input too large" if len > MAX_INPUT
        cap = LZ4_compressBound(len)
        dst = @scratch.get(cap + 4)
        dst.put_uint32(0, len) # native order; all supported targets are little-endian
        n = LZ4_compress_default(src, dst + 4, len, cap)
        raise Error, "LZ4_compress_default failed" if n <= 0
        dst.read_bytes(n + 4)
      end

      def decompress(src)
        raise Error, "lz4: truncated" if src.bytesize < 4
        size = src.unpack1("V")
        dst = @scratch.get(size.zero? ? 1 : size)
        body = src.byteslice(4, src.bytesize - 4)
        n = LZ4_decompress_safe(body, dst, body.bytesize, size)
        raise Error, "LZ4_decompress_safe failed (#{n})" if n != size
        dst.read_bytes(n)
      end
    end
  end
end
