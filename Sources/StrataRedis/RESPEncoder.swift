import NIOCore

/// Encodes commands as RESP arrays of bulk strings (binary-safe), with no
/// allocation beyond the buffer's.
enum RESPEncoder {
    static func encode(_ arguments: [[UInt8]], into buffer: inout ByteBuffer) {
        header(UInt8(ascii: "*"), arguments.count, into: &buffer)
        for argument in arguments {
            header(UInt8(ascii: "$"), argument.count, into: &buffer)
            buffer.writeBytes(argument)
            buffer.writeStaticString("\r\n")
        }
    }

    /// `type`, `count` in decimal, CRLF.
    private static func header(_ type: UInt8, _ count: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(type)
        if count < 10 {
            buffer.writeInteger(UInt8(truncatingIfNeeded: 0x30 + count))
        } else {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
                var value = count, start = 20
                repeat {
                    start -= 1
                    digits[start] = UInt8(truncatingIfNeeded: 0x30 + value % 10)
                    value /= 10
                } while value > 0
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: digits[start...])))
            }
        }
        buffer.writeStaticString("\r\n")
    }
}
